package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
func fromError(err error) response {
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		return fail(http.StatusNotFound, "NoSuchTableException", "%v", err)
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		return fail(http.StatusNotFound, "NoSuchNamespaceException", "%v", err)
	case errors.Is(err, catalog.ErrNamespaceAlreadyExists), errors.Is(err, catalog.ErrTableAlreadyExists):
		return fail(http.StatusConflict, "AlreadyExistsException", "%v", err)
	case errors.Is(err, catalog.ErrNamespaceNotEmpty):
		return fail(http.StatusConflict, "NamespaceNotEmptyException", "%v", err)
	case conflict(err):
		return fail(http.StatusConflict, "CommitFailedException", "%v", err)
	case errors.Is(err, catalog.ErrInvalidIdentifier):
		return badRequest("%v", err)
	case errors.Is(err, context.Canceled):
		return fail(http.StatusServiceUnavailable, "ServiceUnavailableException", "the request was cancelled: %v", err)
	}
	return fail(http.StatusInternalServerError, "InternalServerError", "%v", err)
}

// conflict tells a commit refused because the table is not what its
// requirements assert (iceberg-go's requirement checks return plain
// errors that say so) or because another commit won the race.
func conflict(err error) bool {
	return errors.Is(err, table.ErrCommitFailed) || strings.Contains(strings.ToLower(err.Error()), "requirement failed")
}
