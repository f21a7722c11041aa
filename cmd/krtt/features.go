package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// rowTagPrefix tags a scenario with a row it makes fire:
// @row:<table>:<row id>. The Gherkin suite fails when a tagged row does not
// fire in its scenario, so the tags are a checked statement of coverage.
const rowTagPrefix = "@row:"

// coverageFromFeatures reads the @row tags of every .feature file in dir and
// links each row to its scenarios, relative to the directory the pages are
// written to.
func coverageFromFeatures(dir, pagesDir string) (coverageFile, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.feature"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .feature files in %s", dir)
	}
	sort.Strings(files)
	cov := coverageFile{}
	for _, f := range files {
		if err := scanFeature(f, pagesDir, cov); err != nil {
			return nil, err
		}
	}
	return cov, nil
}

func scanFeature(file, pagesDir string, cov coverageFile) error {
	fh, err := os.Open(file)
	if err != nil {
		return err
	}
	defer fh.Close()
	link, err := filepath.Rel(pagesDir, file)
	if err != nil {
		link = file
	}
	link = filepath.ToSlash(link)
	var pending []string // row tags waiting for their scenario line
	var featureTags []string
	var outline string // the scenario an Examples block belongs to
	sc := bufio.NewScanner(fh)
	line := 0
	add := func(tags []string, line int, name string) error {
		for _, tr := range tags {
			table, row, ok := strings.Cut(tr, ":")
			if !ok {
				return fmt.Errorf("%s:%d: tag %s%s should be %s<table>:<row>", file, line, rowTagPrefix, tr, rowTagPrefix)
			}
			if cov[table] == nil {
				cov[table] = map[string][]string{}
			}
			cov[table][row] = append(cov[table][row], fmt.Sprintf("%s:%d %s", link, line, name))
		}
		return nil
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(text, "@"):
			for _, tag := range strings.Fields(text) {
				if strings.HasPrefix(tag, rowTagPrefix) {
					pending = append(pending, strings.TrimPrefix(tag, rowTagPrefix))
				}
			}
		case strings.HasPrefix(text, "Feature:"):
			featureTags, pending = pending, nil
		case strings.HasPrefix(text, "Scenario:"), strings.HasPrefix(text, "Scenario Outline:"), strings.HasPrefix(text, "Example:"):
			outline = strings.TrimSpace(text[strings.Index(text, ":")+1:])
			if err := add(append(append([]string{}, featureTags...), pending...), line, outline); err != nil {
				return err
			}
			pending = nil
		case strings.HasPrefix(text, "Examples:"):
			// Tags on an Examples block: the outline above, run with these examples.
			name := outline
			if ex := strings.TrimSpace(strings.TrimPrefix(text, "Examples:")); ex != "" {
				name += " (" + ex + ")"
			}
			if err := add(pending, line, name); err != nil {
				return err
			}
			pending = nil
		}
	}
	return sc.Err()
}
