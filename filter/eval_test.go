package filter_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/floe-io/floe/filter"
)

// evalCases cover each construct; exact says whether Pushed alone is the
// filter (no Residual). Null tests on decimals are never pushed (see
// nullTestable), so on decimals <, <=, != and NOT BETWEEN are inexact;
// nothing on a field inside a struct is pushed.
var evalCases = []struct {
	name, filter string
	exact        bool
}{
	{"eq", "id = 5", true},
	{"ne", "id != 5", true},
	{"ne angle", "id <> 5", true},
	{"lt", "id < 10", true},
	{"le", "id <= 10", true},
	{"gt", "id > 100", true},
	{"ge", "id >= 100", true},
	{"literal left", "5 < id", true},
	{"literal left le", "-3 >= n", true},
	{"negative", "id > -5", true},
	{"int column", "n = 3", true},
	{"string", "status = 'ACTIVE'", true},
	{"string quote", "status = 'it''s'", true},
	{"empty string", "status = ''", true},
	{"string order", "status < 'B'", true},
	{"decimal", "price > 12.50", true},
	{"decimal int literal", "price <= 3", false},
	{"decimal eq", "price = 0.74", true},
	{"double", "score >= 1.5", true},
	{"double exponent", "score < 2.5e0", true},
	{"double int", "score = 2", true},
	{"bool", "flag = TRUE", true},
	{"bool false", "flag = false", true},
	{"bool left", "TRUE = flag", true},
	{"date", "d >= DATE '2024-01-15'", true},
	{"date string", "d < '2024-01-01'", true},
	{"timestamp", "ts > TIMESTAMP '2024-01-10 10:00:00'", true},
	{"timestamp T", "ts <= TIMESTAMP '2024-01-10T10:00:01.5'", true},
	{"timestamp fraction eq", "ts = TIMESTAMP '2024-01-01 07:00:01.500'", true},
	{"timestamp date", "ts < DATE '2024-01-05'", true},
	{"timestamptz", "tz >= TIMESTAMP '2024-01-02 00:00:00Z'", true},
	{"time", "t >= TIME '12:00:00'", true},
	{"time string", "t < '06:30'", true},
	{"time between", "t BETWEEN TIME '01:00' AND TIME '02:00:00.000001'", true},
	{"uuid", "u = '35014000-8000-0000-0000-000000000001'", true},
	{"uuid ne", "u != '35014000-8000-0000-0000-000000000001'", true},
	{"uuid order", "u > '80000000-0000-0000-0000-000000000000'", true},
	{"uuid in", "u IN ('00004000-8000-0000-0000-000000000000', '35014000-8000-0000-0000-000000000001', '6a024000-8000-0000-0000-000000000002')", true},
	{"uuid null", "u IS NULL", true},
	{"binary", "bin = X'0100'", true},
	{"binary empty", "bin = X''", true},
	{"binary order", "bin > x'01'", true},
	{"binary ne", "bin <> X'02FE'", true},
	{"binary in", "bin IN (X'00', X'027F', X'0300')", true},
	{"binary between", "bin BETWEEN X'01' AND X'0200'", true},
	{"binary null", "bin IS NOT NULL", true},
	{"fixed", "fx = X'01FF01'", true},
	{"fixed order", "fx <= X'02007F'", true},
	{"fixed ne", "fx != X'000000'", true},
	{"fixed in", "X'04FF04' = fx OR fx IN (X'030003', X'000000')", true},
	{"nested", "a.b = 3", false},
	{"nested ne", "a.b != 3", false},
	{"quoted", `"odd name" = 'x1'`, true},
	{"case insensitive", "ID > 5 AND Status = 'ACTIVE'", true},
	{"and", "id > 5 AND status = 'ACTIVE'", true},
	{"or", "id < 0 OR flag = TRUE", true},
	{"not", "NOT id > 5", true},
	{"not paren", "NOT (id > 5 AND status = 'ACTIVE')", true},
	{"not not", "NOT NOT flag = TRUE", true},
	{"keywords lower", "id > 5 and not (status = 'ACTIVE' or flag = true)", true},
	{"precedence", "id < 0 OR id > 200 AND flag = TRUE", true},
	{"parens", "(id < 0 OR id > 200) AND flag = TRUE", true},
	{"in", "id IN (1, 2, 3, 50)", true},
	{"in one", "status IN ('ACTIVE')", true},
	{"not in", "id NOT IN (1, 2, 3)", true},
	{"not of in", "NOT id IN (1, 2, 3)", true},
	{"in dates", "d IN (DATE '2024-01-01', '2024-01-03')", true},
	{"between", "id BETWEEN 10 AND 20", true},
	{"not between", "id NOT BETWEEN 10 AND 200", true},
	{"not of between", "NOT (price BETWEEN 1 AND 5.5)", false},
	{"between and", "id BETWEEN 10 AND 20 AND flag = TRUE", true},
	{"is null", "status IS NULL", true},
	{"is not null", "status IS NOT NULL", true},
	{"not is null", "NOT status IS NULL", true},
	{"nested null", "a.b IS NULL", false},
	{"nested not null", "a.c IS NOT NULL", false},
	{"nested like", "a.c LIKE '%E'", false},
	{"nested like all", "a.c LIKE '%'", false},
	{"nested like prefix", "a.c LIKE 'A%'", false},
	{"nested not like", "a.c NOT LIKE 'A%'", false},
	{"nested not like inner", "a.c NOT LIKE 'A%E'", false},
	{"decimal null", "price IS NULL", false},
	{"decimal not null", "price IS NOT NULL", false},
	{"decimal lt", "price < 3", false},
	{"true", "TRUE", true},
	{"false", "FALSE", true},
	{"true or", "FALSE OR id = 3", true},
	{"like prefix", "status LIKE 'ACT%'", true},
	{"like exact", "status LIKE 'ACTIVE'", true},
	{"like underscore", "status LIKE 'ACT_VE'", false},
	{"like inner", "status LIKE '%CT%'", false},
	{"like suffix", "status LIKE '%E'", false},
	{"like all", "status LIKE '%'", true},
	{"like prefix inner", "status LIKE 'A%E'", false},
	{"like escape", `status LIKE 'A\_B' ESCAPE '\'`, true},
	{"like escape percent", `status LIKE '100!%' ESCAPE '!'`, true},
	{"like underscore literal", "status LIKE 'A_B'", false},
	{"not like", "status NOT LIKE 'ACT%'", true},
	{"like non-ascii prefix", "status LIKE 'é%'", true},
	{"like unbounded prefix", "status LIKE '¿%'", false},
	{"not like all", "status NOT LIKE '%'", true},
	{"not like inner", "status NOT LIKE '%CT%'", false},
	{"not of like", "NOT status LIKE 'A%E'", false},
	{"like in or", "status LIKE '%T%' OR id = 3", false},
	{"like in and", "status LIKE '%T%' AND id > 3", false},
	{"complex", "(status = 'ACTIVE' OR status LIKE 'in%') AND NOT (price BETWEEN 5 AND 10) AND d IS NOT NULL", false},
}

func TestMatcherAgreesWithReference(t *testing.T) {
	t.Parallel()
	rows := testRows()
	rec := record(t, rows)
	defer rec.Release()
	for _, tc := range evalCases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := filter.Parse(tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			b, err := filter.Bind(e, testSchema)
			if err != nil {
				t.Fatal(err)
			}
			m, err := b.Matcher(rec.Schema())
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Match(rec)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]bool, len(rows))
			count := 0
			for i, r := range rows {
				want[i] = refEval(e, r) == isTrue
				if want[i] {
					count++
				}
			}
			for i := range rows {
				if got[i] != want[i] {
					t.Errorf("row %d %v: matcher %v, reference %v", i, rows[i], got[i], want[i])
				}
			}
			filtered, err := m.Filter(context.Background(), rec)
			if err != nil {
				t.Fatal(err)
			}
			if int(filtered.NumRows()) != count {
				t.Errorf("Filter kept %d rows, want %d", filtered.NumRows(), count)
			}
			filtered.Release()
			checkPushed(t, b, rows, want, tc.exact)
		})
	}
}

// checkPushed evaluates Pushed with iceberg-go's own row evaluator: it
// must hold for every matching row, equal the filter when exact, and with
// the Residual give the filter back.
func checkPushed(t *testing.T, b *filter.Bound, rows []row, want []bool, exact bool) {
	t.Helper()
	if _, err := iceberg.BindExpr(testSchema, b.Pushed, true); err != nil {
		t.Fatalf("Pushed %s does not bind: %v", b.Pushed, err)
	}
	if (b.Residual == nil) != exact {
		t.Errorf("Residual = %v, want exact %v (Pushed %s)", b.Residual, exact, b.Pushed)
	}
	eval, err := iceberg.ExpressionEvaluator(testSchema, b.Pushed, true)
	if err != nil {
		t.Fatal(err)
	}
	var residual []bool
	if b.Residual != nil {
		r, err := filter.Bind(b.Residual, testSchema)
		if err != nil {
			t.Fatalf("Residual %s does not bind: %v", b.Residual, err)
		}
		residual = make([]bool, len(rows))
		for i, row := range rows {
			residual[i] = refEval(r.Filter, row) == isTrue
		}
	}
	for i, r := range rows {
		pushed, err := eval(icebergRow(r))
		if err != nil {
			t.Fatal(err)
		}
		if want[i] && !pushed {
			t.Errorf("row %d %v matches but Pushed %s excludes it", i, r, b.Pushed)
		}
		if got := pushed && (residual == nil || residual[i]); got != want[i] {
			t.Errorf("row %d %v: Pushed %s with Residual %v gives %v, want %v", i, r, b.Pushed, b.Residual, got, want[i])
		}
	}
}

// TestResidualMatcher checks the matcher a scan with Pushed would use.
func TestResidualMatcher(t *testing.T) {
	t.Parallel()
	rows := testRows()
	rec := record(t, rows)
	defer rec.Release()
	for _, s := range []string{"status LIKE '%CT%' AND id > 3", "id > 3"} {
		b, err := filter.Bind(mustParse(t, s), testSchema)
		if err != nil {
			t.Fatal(err)
		}
		m, err := b.ResidualMatcher(rec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Match(rec)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			want := b.Residual == nil || refEval(b.Residual, r) == isTrue
			if got[i] != want {
				t.Errorf("%s: row %d: residual matcher %v, want %v", s, i, got[i], want)
			}
		}
	}
}

// TestFilterIsEquivalent checks that Bound.Filter, the normalised filter,
// selects the same rows as the filter it came from.
func TestFilterIsEquivalent(t *testing.T) {
	t.Parallel()
	rows := testRows()
	for _, tc := range evalCases {
		e := mustParse(t, tc.filter)
		b, err := filter.Bind(e, testSchema)
		if err != nil {
			t.Fatal(err)
		}
		again := mustParse(t, b.Filter.String())
		if !reflect.DeepEqual(again, b.Filter) {
			t.Errorf("%s: Filter %s reparses as %#v", tc.filter, b.Filter, again)
		}
		for i, r := range rows {
			if refEval(e, r) != refEval(b.Filter, r) {
				t.Errorf("%s: row %d: normalised %s differs", tc.filter, i, b.Filter)
			}
		}
	}
}

func mustParse(t *testing.T, s string) filter.Expr {
	t.Helper()
	e, err := filter.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
