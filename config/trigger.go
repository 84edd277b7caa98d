package config

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Trigger kinds. They are the spellings users write, so they double as the
// canonical String() forms.
const (
	// TriggerAvailableNow processes every file present at start, in as many
	// batches as the per-trigger limits require, then stops: the batch-job
	// mode, and the default because it terminates on its own.
	TriggerAvailableNow = "available-now"
	// TriggerOnce processes one batch, ignoring per-trigger limits, then
	// stops. Kept for parity with Spark; available-now is usually better
	// because it respects max-files-per-trigger.
	TriggerOnce = "once"
	// TriggerProcessingTime runs a batch every Interval until stopped.
	TriggerProcessingTime = "processing-time"
)

// Trigger says when micro-batches run. It is written in YAML and on the
// command line as a single scalar ("available-now", "once",
// "processing-time=1m" or just "1m") because a nested mapping for what is
// one choice plus at most one number is needless ceremony.
type Trigger struct {
	// Kind is one of TriggerAvailableNow, TriggerOnce,
	// TriggerProcessingTime; empty means the default, available-now.
	Kind string
	// Interval is the batch period; it is set only for processing-time.
	Interval time.Duration
}

// ParseTrigger parses the scalar form shared by the YAML trigger key and the
// --trigger flag, so both accept exactly the same spellings.
func ParseTrigger(s string) (Trigger, error) {
	v := strings.TrimSpace(s)
	switch v {
	case TriggerAvailableNow:
		return Trigger{Kind: TriggerAvailableNow}, nil
	case TriggerOnce:
		return Trigger{Kind: TriggerOnce}, nil
	case TriggerProcessingTime:
		return Trigger{}, fmt.Errorf("trigger %q needs an interval; write e.g. \"processing-time=1m\" or just \"1m\"", s)
	case "":
		return Trigger{}, fmt.Errorf("empty trigger; use available-now, once, processing-time=<duration> or a duration such as \"1m\"")
	}
	iv, isPT := strings.CutPrefix(v, TriggerProcessingTime+"=")
	if !isPT {
		// A bare duration is the common streaming case, so it may skip the
		// prefix. Only text that starts like a number is tried as one, so a
		// misspelt kind ("availble-now") gets the list of kinds rather
		// than a confusing duration-syntax complaint.
		if c := v[0]; !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+') {
			name, _, _ := strings.Cut(v, "=")
			if hint := Closest(name, []string{TriggerAvailableNow, TriggerOnce, TriggerProcessingTime}); hint != "" {
				return Trigger{}, fmt.Errorf("unknown trigger %q; did you mean %q? (use available-now, once, processing-time=<duration> or a duration such as \"1m\")", s, hint)
			}
			return Trigger{}, fmt.Errorf("unknown trigger %q; use available-now, once, processing-time=<duration> or a duration such as \"1m\"", s)
		}
		iv = v
	}
	d, err := ParseDuration(iv)
	if err != nil {
		return Trigger{}, fmt.Errorf("bad trigger interval: %w", err)
	}
	if d <= 0 {
		return Trigger{}, fmt.Errorf("trigger interval %q must be greater than zero; for a single batch use \"once\" or \"available-now\"", strings.TrimSpace(iv))
	}
	return Trigger{Kind: TriggerProcessingTime, Interval: d}, nil
}

// String gives the canonical spelling, which ParseTrigger reads back to an
// equal Trigger. The zero Trigger prints as the default it stands for.
func (t Trigger) String() string {
	switch t.Kind {
	case TriggerProcessingTime:
		return TriggerProcessingTime + "=" + formatDuration(t.Interval)
	case "":
		return TriggerAvailableNow
	}
	return t.Kind
}

// Set lets *Trigger be a flag.Value, so the CLI's --trigger flag and the
// YAML key cannot disagree about syntax.
func (t *Trigger) Set(s string) error {
	v, err := ParseTrigger(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// UnmarshalYAML reads the scalar form. It reports a *yaml.TypeError so that
// yaml.v3 keeps decoding and a direct caller still sees every problem.
func (t *Trigger) UnmarshalYAML(n *yaml.Node) error {
	v, err := triggerFromNode(n)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*t = v
	return nil
}

// MarshalYAML writes the canonical scalar so a marshalled pipeline reads back.
func (t Trigger) MarshalYAML() (any, error) { return t.String(), nil }

func triggerFromNode(n *yaml.Node) (Trigger, error) {
	if n.Kind != yaml.ScalarNode {
		return Trigger{}, fmt.Errorf("cannot use %s as a trigger; write one string: available-now, once, processing-time=<duration> or a duration such as \"1m\"", describeKind(n))
	}
	return ParseTrigger(n.Value)
}
