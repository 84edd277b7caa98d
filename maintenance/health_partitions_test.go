package maintenance_test

import (
	"slices"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/maintenance"
)

func TestCoarserFields(t *testing.T) {
	day, hour := iceberg.DayTransform{}, iceberg.HourTransform{}
	identity := iceberg.IdentityTransform{}
	for _, c := range []struct {
		name       string
		need       float64
		sources    []string
		transforms []iceberg.Transform
		distinct   []int
		want       []string
	}{
		{"large enough", 0.5, []string{"ts"}, []iceberg.Transform{day}, []int{80}, []string{"day(ts)"}},
		{"day to month", 23, []string{"ts"}, []iceberg.Transform{day}, []int{80}, []string{"month(ts)"}},
		{"day to year", 100, []string{"ts"}, []iceberg.Transform{day}, []int{800}, []string{"year(ts)"}},
		{"day dropped", 400_000, []string{"ts"}, []iceberg.Transform{day}, []int{80}, []string{}},
		{"hour to day", 10, []string{"ts"}, []iceberg.Transform{hour}, []int{100}, []string{"day(ts)"}},
		{"identity bucketed", 8, []string{"country"}, []iceberg.Transform{identity}, []int{80}, []string{"bucket(country, 10)"}},
		{"identity dropped", 50, []string{"country"}, []iceberg.Transform{identity}, []int{80}, []string{}},
		{"fewer buckets", 4, []string{"id"}, []iceberg.Transform{iceberg.BucketTransform{NumBuckets: 64}}, []int{64}, []string{"bucket(id, 16)"}},
		{"last field first", 40, []string{"ts", "country"}, []iceberg.Transform{day, identity}, []int{80, 80}, []string{"day(ts)", "bucket(country, 2)"}},
		{"then the one before", 400, []string{"ts", "country"}, []iceberg.Transform{day, identity}, []int{80, 80}, []string{"month(ts)"}},
		{"one value kept", 40, []string{"ts", "country"}, []iceberg.Transform{day, identity}, []int{80, 1}, []string{"year(ts)", "identity(country)"}},
		{"truncate dropped", 2, []string{"ts", "name"}, []iceberg.Transform{day, iceberg.TruncateTransform{Width: 4}}, []int{80, 50}, []string{"day(ts)"}},
	} {
		if got := maintenance.CoarserFields(c.need, c.sources, c.transforms, c.distinct); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
