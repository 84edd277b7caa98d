package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/source"
	"github.com/floe-io/floe/source/files"
)

// Options of a topic of object-store event notifications: its messages
// announce objects, which are read as source.format.
const (
	optNotifications = "objectNotifications"
	optDedupMessages = "objectNotifications.dedupMessages"
	// defaultDedupMessages is how many earlier messages of a partition a
	// notification is checked against for a duplicate.
	defaultDedupMessages = 100_000
)

// notified is the source's reading of a topic of S3 event notifications.
type notified struct {
	objects *files.Announced
	// window is how many earlier messages of its partition a notification
	// is a duplicate of when one of them announced the same object version.
	window int64
	// seen are per partition the object versions its newest messages
	// announced, kept between batches while the worker reads the partition
	// in order.
	seen map[TopicPartition]*seenWindow
	// excluded are objects the engine dropped from the batch ending at
	// excludedEnd (replaced while read).
	excluded    map[string]bool
	excludedEnd string
}

func newNotified(cfg config.Source, env source.Env) (*notified, error) {
	o := cfg.Options
	switch v := strings.TrimSpace(o[optNotifications]); v {
	case "":
		return nil, nil
	case "s3":
	default:
		return nil, fmt.Errorf("%w: source.options.%s %q is not a kind of notification; use s3 (S3 event notifications, as S3 through SQS, SNS or EventBridge, MinIO and Ceph RGW publish them)", source.ErrConfig, optNotifications, v)
	}
	n := &notified{window: defaultDedupMessages, seen: map[TopicPartition]*seenWindow{}, excluded: map[string]bool{}}
	if v := strings.TrimSpace(o[optDedupMessages]); v != "" {
		w, err := strconv.ParseInt(v, 10, 64)
		if err != nil || w < 0 {
			return nil, fmt.Errorf("%w: source.options.%s %q is not a number of messages", source.ErrConfig, optDedupMessages, v)
		}
		n.window = w
	}
	var err error
	if n.objects, err = files.NewAnnounced(cfg, env.Properties); err == nil {
		n.objects.SetAsideBadLines(env.DeadLetters)
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// announcement is one object version a notification announces.
type announcement struct {
	object files.Object
	// version tells the object's versions apart: its version id, else its
	// event's sequencer, else its ETag.
	version string
}

func (a announcement) id() string { return a.object.URL + "@" + a.version }

// s3Event is the part of an S3 event notification, as S3 sends it to SQS
// and SNS and MinIO and Ceph RGW publish it, that names the object.
type s3Event struct {
	Records []struct {
		EventName string `json:"eventName"`
		S3        struct {
			Bucket struct {
				Name string `json:"name"`
			} `json:"bucket"`
			Object struct {
				Key       string `json:"key"`
				ETag      string `json:"eTag"`
				VersionID string `json:"versionId"`
				Sequencer string `json:"sequencer"`
			} `json:"object"`
		} `json:"s3"`
	} `json:"Records"`
	// SNS wraps the event, as a string, in Message.
	Type    string `json:"Type"`
	Message string `json:"Message"`
	// EventBridge's shape.
	DetailType string `json:"detail-type"`
	Source     string `json:"source"`
	Detail     struct {
		Bucket struct {
			Name string `json:"name"`
		} `json:"bucket"`
		Object struct {
			Key       string `json:"key"`
			ETag      string `json:"etag"`
			VersionID string `json:"version-id"`
			Sequencer string `json:"sequencer"`
		} `json:"object"`
	} `json:"detail"`
	// S3's test event, sent when notifications are set up.
	Event string `json:"Event"`
}

// parseNotification reads the objects one message announces as created;
// other events (removals, S3's test event) announce none.
func parseNotification(value []byte) ([]announcement, error) {
	var ev s3Event
	if err := json.Unmarshal(value, &ev); err != nil {
		return nil, fmt.Errorf("the value is not an S3 event notification (JSON): %w", err)
	}
	if ev.Type == "Notification" && ev.Message != "" {
		return parseNotification([]byte(ev.Message))
	}
	var out []announcement
	add := func(bucket, key, etag, version, sequencer string) error {
		if bucket == "" || key == "" {
			return errors.New("an object-created event names no bucket or no key")
		}
		// S3 sends keys URL-encoded, spaces as '+'.
		k, err := url.QueryUnescape(key)
		if err != nil {
			return fmt.Errorf("object key %q is not URL-encoded as S3 sends it: %w", key, err)
		}
		a := announcement{object: files.Object{URL: "s3://" + bucket + "/" + k, ETag: etag}}
		for _, v := range []string{version, sequencer, strings.Trim(etag, `"`)} {
			if v != "" {
				a.version = v
				break
			}
		}
		out = append(out, a)
		return nil
	}
	switch {
	case ev.Source == "aws.s3" && ev.DetailType != "":
		if ev.DetailType == "Object Created" {
			o := ev.Detail.Object
			if err := add(ev.Detail.Bucket.Name, o.Key, o.ETag, o.VersionID, o.Sequencer); err != nil {
				return nil, err
			}
		}
	case ev.Event != "" && len(ev.Records) == 0:
		// s3:TestEvent
	case ev.Records == nil:
		return nil, errors.New(`the value is not an S3 event notification: it has no "Records" (nor SNS's "Message" or EventBridge's "detail")`)
	}
	for _, r := range ev.Records {
		if !strings.Contains(r.EventName, "ObjectCreated:") {
			continue
		}
		o := r.S3.Object
		if err := add(r.S3.Bucket.Name, o.Key, o.ETag, o.VersionID, o.Sequencer); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// seenWindow is the object versions the last messages of a partition
// announced, up to a number of messages.
type seenWindow struct {
	until int64 // the offset after the last message seen
	ids   []seenID
	count map[string]int
}

type seenID struct {
	offset int64
	id     string
}

func (w *seenWindow) add(offset int64, id string) {
	w.ids = append(w.ids, seenID{offset, id})
	w.count[id]++
}

// trim forgets what was announced before offset from.
func (w *seenWindow) trim(from int64) {
	i := 0
	for i < len(w.ids) && w.ids[i].offset < from {
		if w.count[w.ids[i].id]--; w.count[w.ids[i].id] == 0 {
			delete(w.count, w.ids[i].id)
		}
		i++
	}
	w.ids = w.ids[i:]
}

// window is what the partition's messages before offset from, within the
// window, announced: kept from the last batch when it ended there, else
// read from the topic.
func (s *Source) window(ctx context.Context, tp TopicPartition, from, start int64) (*seenWindow, error) {
	n := s.notified
	if w, ok := n.seen[tp]; ok && w.until == from {
		return w, nil
	}
	w := &seenWindow{until: from, count: map[string]int{}}
	lo := max(from-n.window, start, 0)
	if lo < from {
		p := &part{src: s, r: Range{TopicPartition: tp, From: lo, Until: from}}
		if err := p.fetch(ctx); err != nil {
			return nil, err
		}
		for _, r := range p.records {
			as, err := parseNotification(r.Value)
			if err != nil {
				// Read, and refused, when its own batch was.
				continue
			}
			for _, a := range as {
				w.add(r.Offset, a.id())
			}
		}
	}
	n.seen[tp] = w
	return w, nil
}

// announcedParts reads the notifications of the ranges and returns parts
// of the objects they announce, each version once: a notification of an
// object version that an earlier message of its partition (within the
// window) or another range of the batch announced is a duplicate.
func (s *Source) announcedParts(ctx context.Context, ranges []Range, starts map[TopicPartition]int64) ([]source.Part, error) {
	n := s.notified
	var objs []files.Object
	dups := 0
	// A version announced on two partitions of the batch is read once too.
	batch := map[string]bool{}
	for _, r := range ranges {
		w, err := s.window(ctx, r.TopicPartition, r.From, starts[r.TopicPartition])
		if err != nil {
			return nil, err
		}
		p := &part{src: s, r: r}
		if err := p.fetch(ctx); err != nil {
			return nil, err
		}
		for _, rec := range p.records {
			if rec.Value == nil {
				continue // a tombstone
			}
			as, err := parseNotification(rec.Value)
			if err != nil {
				return nil, p.bad(rec.Offset, err)
			}
			for _, a := range as {
				id := a.id()
				if w.count[id] > 0 || batch[id] {
					dups++
				} else if !n.excluded[a.object.URL] {
					objs = append(objs, a.object)
				}
				batch[id] = true
				w.add(rec.Offset, id)
			}
		}
		w.until = r.Until
		w.trim(r.Until - n.window)
	}
	parts, skipped, err := n.objects.Parts(ctx, objs)
	if err != nil {
		return nil, err
	}
	for _, why := range skipped {
		s.warn("kafka source: %s; it is not ingested", why)
	}
	if dups > 0 {
		s.log.Debug("kafka source: duplicate notifications skipped", "duplicates", dups)
	}
	return parts, nil
}

// Notified is the source of a topic of object-store event notifications:
// its batches are of objects, one of which can be dropped from a batch as
// a landing file can.
type Notified struct{ *Source }

var _ source.Excluder = (*Notified)(nil)

// Exclude drops objects from the batch ending at end: replaced while they
// were read, their announced version is gone.
func (s *Notified) Exclude(_ context.Context, end source.Offset, names []string) error {
	n := s.notified
	if string(end) != n.excludedEnd {
		n.excluded, n.excludedEnd = map[string]bool{}, string(end)
	}
	for _, name := range names {
		n.excluded[name] = true
	}
	return nil
}
