package catalogs

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/go-sql-driver/mysql" // registers "mysql" (MySQL, MariaDB)
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx" (PostgreSQL)

	"github.com/floe-io/floe/internal/ingest"
)

// sqlServer is the database server an sql catalog's URI names, PostgreSQL
// or MySQL/MariaDB, in the form Spark's JDBC catalog takes
// (jdbc:postgresql://host:5432/db, jdbc:mysql://host:3306/db, with the
// credentials in the URI, in ?user=&password=, or in the jdbc.user and
// jdbc.password catalog properties) or without the jdbc: prefix. ok is
// false for anything else, which is an SQLite database.
type sqlServer struct {
	driver  string
	dialect sqlcat.SupportedDialect
	dsn     string // what the driver opens
	shown   string // the URI without its password, for messages
}

func parseSQLServer(uri string, props iceberg.Properties) (s sqlServer, ok bool, err error) {
	raw := strings.TrimPrefix(uri, "jdbc:")
	scheme, _, found := strings.Cut(raw, "://")
	if !found {
		return s, false, nil
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		s.driver, s.dialect = "pgx", sqlcat.Postgres
	case "mysql", "mariadb":
		s.driver, s.dialect = "mysql", sqlcat.MySQL
	default:
		return s, false, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return s, true, fmt.Errorf("%w: catalog uri %q is not a database URL; write it as %s://HOST:PORT/DATABASE", ingest.ErrConfig, uri, scheme)
	}
	q := u.Query()
	user, pass := u.User.Username(), ""
	if p, set := u.User.Password(); set {
		pass = p
	}
	if v := q.Get("user"); v != "" {
		user = v
	}
	if v := q.Get("password"); v != "" {
		pass = v
	}
	if user == "" {
		user = props["jdbc.user"]
	}
	if pass == "" {
		pass = props["jdbc.password"]
	}
	q.Del("user")
	q.Del("password")
	db := strings.TrimPrefix(u.Path, "/")
	shown := *u
	shown.User = nil
	if user != "" {
		shown.User = url.User(user)
	}
	shown.RawQuery = q.Encode()
	s.shown = shown.String()
	switch s.driver {
	case "pgx":
		out := url.URL{Scheme: "postgres", Host: u.Host, Path: "/" + db, RawQuery: q.Encode()}
		if user != "" {
			out.User = url.UserPassword(user, pass)
			if pass == "" {
				out.User = url.User(user)
			}
		}
		s.dsn = out.String()
	case "mysql":
		cred := ""
		if user != "" {
			cred = user
			if pass != "" {
				cred += ":" + pass
			}
			cred += "@"
		}
		s.dsn = fmt.Sprintf("%stcp(%s)/%s", cred, u.Host, db)
		if len(q) > 0 {
			s.dsn += "?" + q.Encode()
		}
	}
	return s, true, nil
}
