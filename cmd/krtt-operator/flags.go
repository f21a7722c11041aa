package main

import (
	"encoding/csv"
	"strings"
)

// listFlag is a flag given as a comma-separated list, or repeated, as the
// string-slice flags of Cluster API's manager are: a value with a comma in it
// is quoted ("a{1,3}").
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	if v == "" {
		return nil
	}
	items, err := csv.NewReader(strings.NewReader(v)).Read()
	if err != nil {
		return err
	}
	*l = append(*l, items...)
	return nil
}
