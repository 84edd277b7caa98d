package cluster

import (
	"encoding/json"
	"fmt"
	"maps"
)

// InputTopicIDs is the record input key (commit.Record.Input) holding the
// ids of the topics the record's offsets were read from, so that offsets
// of a topic deleted and created again under its name, which start again
// at 0, are never taken for offsets of the new topic.
const InputTopicIDs = "topic-ids"

// TopicIDs are per topic the id Kafka gave it when it was created
// (base64, as kadm prints it). A record without them (written before
// records carried them, or read from brokers older than Kafka 2.8) names
// none, and only the offsets themselves can tell a discontinuity.
type TopicIDs map[string]string

// ParseTopicIDs reads the ids an input records; none when it records none.
func ParseTopicIDs(input map[string]string) (TopicIDs, error) {
	v, ok := input[InputTopicIDs]
	if !ok || v == "" {
		return nil, nil
	}
	var ids TopicIDs
	if err := json.Unmarshal([]byte(v), &ids); err != nil {
		return nil, fmt.Errorf("record input %s %q is not JSON such as {\"events\":\"<topic id>\"}: %v", InputTopicIDs, v, err)
	}
	return ids, nil
}

// Of is the ids of the topics of o, as ids has them.
func (ids TopicIDs) Of(o Offsets) TopicIDs {
	out := TopicIDs{}
	for t := range o {
		if id := ids[t]; id != "" {
			out[t] = id
		}
	}
	return out
}

// Merge is ids with the ids of more for the topics ids does not name.
func (ids TopicIDs) Merge(more TopicIDs) TopicIDs {
	out := maps.Clone(more)
	if out == nil {
		out = TopicIDs{}
	}
	maps.Copy(out, ids)
	return out
}

// String is the ids as the record input holds them.
func (ids TopicIDs) String() string {
	if ids == nil {
		ids = TopicIDs{}
	}
	b, _ := json.Marshal(ids)
	return string(b)
}
