package kafka

import (
	"strings"
	"testing"
)

// The shapes S3 event notifications reach a topic in: S3's own (as SQS
// receives it, and as MinIO and Ceph RGW publish it), wrapped by SNS, and
// EventBridge's; only object-created events announce an object, keys are
// URL-decoded, and a version is told by its version id, else its
// sequencer, else its ETag.
func TestParseNotification(t *testing.T) {
	t.Parallel()
	aws := `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"land"},"object":{"key":"in/a+b%3D1.json","size":10,"eTag":"abc","sequencer":"0055AED6DCD90281E5"}}}]}`
	minio := `{"EventName":"s3:ObjectCreated:Put","Key":"land/x.json","Records":[{"eventName":"s3:ObjectCreated:Put","s3":{"bucket":{"name":"land"},"object":{"key":"x.json","eTag":"e1","versionId":"v7"}}}]}`
	removed := `{"Records":[{"eventName":"ObjectRemoved:Delete","s3":{"bucket":{"name":"land"},"object":{"key":"x.json"}}}]}`
	sns := `{"Type":"Notification","MessageId":"1","Message":` + quote(aws) + `}`
	bridge := `{"version":"0","detail-type":"Object Created","source":"aws.s3","detail":{"bucket":{"name":"land"},"object":{"key":"y.json","size":5,"etag":"e2"}}}`
	bridgeDeleted := `{"detail-type":"Object Deleted","source":"aws.s3","detail":{"bucket":{"name":"land"},"object":{"key":"y.json"}}}`
	test := `{"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"land"}`
	for _, c := range []struct {
		name, value string
		want        []string // url@version
	}{
		{"s3", aws, []string{"s3://land/in/a b=1.json@0055AED6DCD90281E5"}},
		{"minio", minio, []string{"s3://land/x.json@v7"}},
		{"a removal", removed, nil},
		{"sns", sns, []string{"s3://land/in/a b=1.json@0055AED6DCD90281E5"}},
		{"eventbridge", bridge, []string{"s3://land/y.json@e2"}},
		{"eventbridge removal", bridgeDeleted, nil},
		{"s3 test event", test, nil},
	} {
		as, err := parseNotification([]byte(c.value))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, a := range as {
			got = append(got, a.id())
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: announced %v, want %v", c.name, got, c.want)
		}
	}
	for _, bad := range []string{`not json`, `{"hello":1}`, `{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":""},"object":{"key":"k"}}}]}`} {
		if _, err := parseNotification([]byte(bad)); err == nil {
			t.Errorf("%s: read as a notification", bad)
		}
	}
}

func quote(s string) string { return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"` }
