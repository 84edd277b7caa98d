"""PyIceberg as a client of `floe serve`, driven by pyiceberg_test.go.

    python pyiceberg_check.py --uri URI [--credential ID:SECRET] STEP... [--rows FILE] [--rows2 FILE] [--since MICROS]

Runs the steps in order as an OAuth2 client of the server (the
client-credentials grant, when --credential is given) and prints one JSON
object, each step's answer under its name; the Go test judges them.

  create  creates the namespace and the table (partitioned by category),
          appends the rows of --rows as one pyarrow table, adds the column
          note, appends the rows of --rows2; answers the rows each scan
          returned, the loaded table's schema, spec and location, the
          namespaces and tables listed, and what a client without the
          credential is told
  append  appends the rows of --rows
  evolve  partitions the table by day(ts) as well, for the writes after
          (PyIceberg itself writes that transform only with pyiceberg-core,
          which the engines leave out)
  read    answers the table's rows, those of a scan filtered on both
          partition fields, its schema, specs, snapshots and data files
          (inspect)
  drop    purges the table and drops the namespace; answers what exists
          after

Rows go in and out as JSON objects: id, name, ts (microseconds since the
epoch, UTC), amount, category, note; null as null.
"""

import argparse
import json
import sys

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestamptzType

NAMESPACE = "pyi"
TABLE = "pyi.events"

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "ts", TimestamptzType(), required=False),
    NestedField(4, "amount", DoubleType(), required=False),
    NestedField(5, "category", StringType(), required=False),
)

SPEC = PartitionSpec(PartitionField(source_id=5, field_id=1000, transform=IdentityTransform(), name="category"))


def arrow_rows(path, with_note):
    """The rows of a JSON-lines file as a pyarrow table of the table's types."""
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    fields = [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("amount", pa.float64()),
        pa.field("category", pa.string()),
    ]
    if with_note:
        fields.append(pa.field("note", pa.string()))
    schema = pa.schema(fields)
    columns = {f.name: [r.get(f.name) for r in rows] for f in fields}
    return pa.Table.from_pydict(columns, schema=schema)


def json_rows(table):
    """A scan's rows as JSON objects, timestamps as epoch microseconds."""
    i = table.schema.get_field_index("ts")
    return table.set_column(i, "ts", table.column("ts").cast(pa.int64())).to_pylist()


def schema_json(tbl):
    return [{"id": f.field_id, "name": f.name, "type": str(f.field_type), "required": f.required} for f in tbl.schema().fields]


def spec_json(tbl):
    return [{"source": f.source_id, "transform": str(f.transform), "name": f.name} for f in tbl.spec().fields]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("steps", nargs="+", choices=["create", "append", "evolve", "read", "drop"])
    p.add_argument("--uri", required=True)
    p.add_argument("--credential")
    p.add_argument("--rows")
    p.add_argument("--rows2")
    p.add_argument("--since", type=int, help="read: the filtered scan's least ts")
    args = p.parse_args()
    props = {"credential": args.credential} if args.credential else {}
    catalog = load_catalog("floe", type="rest", uri=args.uri, **props)
    answers = {}
    for step in args.steps:
        answers[step] = STEPS[step](catalog, args)
    json.dump(answers, sys.stdout, default=str)


def create(catalog, args):
    out = {}
    catalog.create_namespace(NAMESPACE, {"owner": "pyiceberg"})
    tbl = catalog.create_table(TABLE, schema=SCHEMA, partition_spec=SPEC)
    tbl.append(arrow_rows(args.rows, with_note=False))
    out["first"] = json_rows(tbl.scan().to_arrow())
    with tbl.update_schema() as update:
        update.add_column("note", StringType(), doc="added by PyIceberg")
    tbl.append(arrow_rows(args.rows2, with_note=True))
    loaded = catalog.load_table(TABLE)
    out["rows"] = json_rows(loaded.scan().to_arrow())
    out["schema"] = schema_json(loaded)
    out["spec"] = spec_json(loaded)
    out["namespaces"] = [".".join(n) for n in catalog.list_namespaces()]
    out["namespace_properties"] = catalog.load_namespace_properties(NAMESPACE)
    out["tables"] = [".".join(t) for t in catalog.list_tables(NAMESPACE)]
    out["location"] = loaded.location()
    try:
        load_catalog("anonymous", type="rest", uri=args.uri).list_namespaces()
        out["without_credential"] = "served"
    except Exception as e:  # the client's error type is the answer
        out["without_credential"] = type(e).__name__
    return out


def append(catalog, args):
    catalog.load_table(TABLE).append(arrow_rows(args.rows, with_note=True))
    return {}


def evolve(catalog, args):
    with catalog.load_table(TABLE).update_spec() as update:
        update.add_field("ts", DayTransform(), "ts_day")
    return {"spec": spec_json(catalog.load_table(TABLE))}


def read(catalog, args):
    tbl = catalog.load_table(TABLE)
    out = {"rows": json_rows(tbl.scan().to_arrow())}
    # Pruned by both partition fields: rows floe wrote under the wrong
    # partition would go missing here.
    flt = And(EqualTo("category", "b"), GreaterThanOrEqual("ts", args.since))
    out["filtered"] = json_rows(tbl.scan(row_filter=flt).to_arrow())
    out["schema"] = schema_json(tbl)
    out["spec"] = spec_json(tbl)
    out["specs"] = len(tbl.specs())
    out["snapshots"] = [
        {"id": s.snapshot_id, "parent": s.parent_snapshot_id, "operation": s.summary.operation.value if s.summary else None}
        for s in tbl.snapshots()
    ]
    out["snapshots_table"] = tbl.inspect.snapshots().num_rows
    out["files"] = [
        {"path": r["file_path"], "records": r["record_count"], "spec": r["spec_id"], "partition": r["partition"]}
        for r in tbl.inspect.files().select(["file_path", "record_count", "spec_id", "partition"]).to_pylist()
    ]
    return out


def drop(catalog, args):
    out = {}
    catalog.purge_table(TABLE)
    out["exists"] = catalog.table_exists(TABLE)
    try:
        catalog.load_table(TABLE)
        out["load"] = "loaded"
    except NoSuchTableError as e:
        out["load"] = "NoSuchTableError: " + str(e)
    out["tables"] = [".".join(t) for t in catalog.list_tables(NAMESPACE)]
    catalog.drop_namespace(NAMESPACE)
    out["namespaces"] = [".".join(n) for n in catalog.list_namespaces()]
    return out


STEPS = {"create": create, "append": append, "evolve": evolve, "read": read, "drop": drop}


if __name__ == "__main__":
    main()
