package cluster

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/floe-io/floe/internal/commit"
	"github.com/floe-io/floe/internal/ingest"
)

// OptionStateTable is the source option naming a template sink cluster's
// state table.
const OptionStateTable = "stateTable"

// StateTable is the state table of a template sink's cluster (see
// Destinations): the option's table, or floe_cluster_<group> in the
// template's namespace when that has no placeholder.
func StateTable(template, option, group string) (string, error) {
	if option = strings.TrimSpace(option); option != "" {
		if strings.ContainsAny(option, "{}") {
			return "", fmt.Errorf("%w: source.options.%s %q names a template; name one table", ingest.ErrConfig, OptionStateTable, option)
		}
		if _, err := ingest.ParseIdent(option); err != nil {
			return "", fmt.Errorf("%w: source.options.%s: %v", ingest.ErrConfig, OptionStateTable, err)
		}
		return option, nil
	}
	i := strings.LastIndex(template, ".")
	if i < 0 || strings.ContainsAny(template[:i], "{}") {
		return "", fmt.Errorf("%w: a cluster writing the tables of template %s records its commits in a state table, and the template's namespace is not fixed; name the table with source.options.%s (e.g. db.floe_cluster)", ingest.ErrConfig, template, OptionStateTable)
	}
	name := []byte("floe_cluster_")
	for _, r := range strings.ToLower(group) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			name = append(name, byte(r))
		default:
			name = append(name, '_')
		}
	}
	return template[:i] + "." + string(name), nil
}

// ensureStateTable creates the state table unless it exists (a worker
// starting at the same time may create it first).
func ensureStateTable(ctx context.Context, c *commit.Committer, template string) error {
	tbl, err := c.Load(ctx)
	if err != nil || tbl != nil {
		return err
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "state", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	_, err = c.Create(ctx, schema, commit.CreateOptions{FormatVersion: 2, Properties: map[string]string{
		"comment": fmt.Sprintf("floe cluster state: the commits of the cluster writing %s, in its properties and snapshot summaries; holds no rows", template),
	}})
	if err != nil {
		return fmt.Errorf("create the cluster's state table %s: %w", c.Name(), err)
	}
	return nil
}
