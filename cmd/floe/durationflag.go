package main

import (
	"time"

	"github.com/floe-io/floe/config"
)

// durationFlag is a flag.Value reading floe's durations ("5d", "12h"), as
// the pipeline YAML does.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return config.Duration(*f.d).String()
}

func (f durationFlag) Set(s string) error {
	v, err := config.ParseDuration(s)
	if err != nil {
		return err
	}
	*f.d = v
	return nil
}
