package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// errorModel is the specification's ErrorModel; its type names are the
// Java exception names clients switch on.
type errorModel struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

type errorResponse struct {
	Error errorModel `json:"error"`
}

func fail(status int, typ, format string, args ...any) response {
	return response{status: status, body: errorResponse{errorModel{Message: fmt.Sprintf(format, args...), Type: typ, Code: status}}}
}

func badRequest(format string, args ...any) response {
	return fail(http.StatusBadRequest, "BadRequestException", format, args...)
}

// fromError maps what the backing catalog returned onto the status and
// exception type a client acts on. A commit that failed for a reason other
// than a conflict is a 500, which tells the client its outcome is unknown,
// as the specification requires.
//
// The catalog's own words go to the client only when they name no file:
// a catalog's errors may carry the server's paths (a metadata file it
// could not read, a directory it could not make). Otherwise the client
// gets a reference to the server's log line, which has them.
func (s *Server) fromError(err error) response {
	status, typ := http.StatusInternalServerError, "InternalServerError"
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		status, typ = http.StatusNotFound, "NoSuchTableException"
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		status, typ = http.StatusNotFound, "NoSuchNamespaceException"
	case errors.Is(err, catalog.ErrNamespaceAlreadyExists), errors.Is(err, catalog.ErrTableAlreadyExists):
		status, typ = http.StatusConflict, "AlreadyExistsException"
	case errors.Is(err, catalog.ErrNamespaceNotEmpty):
		status, typ = http.StatusConflict, "NamespaceNotEmptyException"
	case conflict(err):
		status, typ = http.StatusConflict, "CommitFailedException"
	case errors.Is(err, catalog.ErrInvalidIdentifier):
		status, typ = http.StatusBadRequest, "BadRequestException"
	case errors.Is(err, context.Canceled):
		return fail(http.StatusServiceUnavailable, "ServiceUnavailableException", "the request was cancelled")
	}
	msg := err.Error()
	hide := namesFile(msg)
	if status == http.StatusInternalServerError || hide {
		ref := errorRef()
		s.logger().Error("catalog request failed", "ref", ref, "status", status, "error", msg)
		if hide {
			msg = fmt.Sprintf("the catalog failed (%s); the server's log has the cause under ref=%s", http.StatusText(status), ref)
		} else {
			msg += " (ref=" + ref + " in the server's log)"
		}
	}
	return fail(status, typ, "%s", msg)
}

// fileName finds what looks like a file system path or a URI in a message:
// a rooted path of two segments or more, a drive path, or scheme://.
var fileName = regexp.MustCompile(`(^|[^\w.-])/[^/\s]+/|[A-Za-z]:\\|[A-Za-z][A-Za-z0-9+.-]*://|file:`)

func namesFile(msg string) bool { return fileName.MatchString(msg) }

// errorRef ties a client's error to the server's log line.
func errorRef() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// conflict tells a commit refused because the table is not what its
// requirements assert (iceberg-go's requirement checks return plain
// errors that say so) or because another commit won the race.
func conflict(err error) bool {
	return errors.Is(err, table.ErrCommitFailed) || strings.Contains(strings.ToLower(err.Error()), "requirement failed")
}
