package files

import "testing"

// Keys are what follows a store's scheme and authority, whatever the
// authority holds.
func TestObjectKeys(t *testing.T) {
	for _, tc := range []struct{ scheme, root, base, prefix string }{
		{"s3", "s3://bucket/landing/events", "s3://bucket/", "landing/events/"},
		{"s3", "s3://bucket", "s3://bucket/", ""},
		{"gs", "gs://bucket/a", "gs://bucket/", "a/"},
		{"abfss", "abfss://files@account.dfs.core.windows.net/landing", "abfss://files@account.dfs.core.windows.net/", "landing/"},
	} {
		o := &objectStore{base: objectBase(tc.scheme, tc.root), root: tc.root}
		if o.base != tc.base || o.prefix() != tc.prefix {
			t.Errorf("%s: base %q, prefix %q; want %q, %q", tc.root, o.base, o.prefix(), tc.base, tc.prefix)
		}
		if rel, err := o.rel(o.join("x/y.csv")); err != nil || rel != "x/y.csv" || o.key(o.join("x/y.csv")) != tc.prefix+"x/y.csv" {
			t.Errorf("%s: x/y.csv is rel %q (%v), key %q", tc.root, rel, err, o.key(o.join("x/y.csv")))
		}
	}
}
