"""The Spark session every bench application opens: local, UTC, no UI,
Iceberg's SQL extensions, and the embedded warehouse's SQLite catalog as
Iceberg's JDBC catalog under the name floe (the name floe writes in it)."""

from pyspark.sql import SparkSession


def session(app, warehouse):
    return (
        SparkSession.builder.appName(app)
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.floe", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.floe.type", "jdbc")
        .config("spark.sql.catalog.floe.uri", "jdbc:sqlite:%s/catalog.db" % warehouse)
        .config("spark.sql.catalog.floe.jdbc.schema-version", "V1")
        .config("spark.sql.catalog.floe.warehouse", warehouse)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
