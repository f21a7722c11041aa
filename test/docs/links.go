// Package docs checks the repository's Markdown: every relative link in
// README.md and docs/ must lead to a file (and to a heading, when it names an
// #anchor of a Markdown file), and README.md stays a front page.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Link is one Markdown link or image: where it is and what it points at.
type Link struct {
	File   string
	Line   int
	Target string
}

func (l Link) String() string { return fmt.Sprintf("%s:%d: %s", l.File, l.Line, l.Target) }

var (
	linkRE    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeRE    = regexp.MustCompile("`+[^`]*`+")
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// Parse returns the links of a Markdown text and the anchors of its headings
// (as GitHub makes them). Fenced code blocks and inline code are skipped.
func Parse(file string, text string) (links []Link, anchors map[string]bool) {
	anchors = map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			a := Slug(m[2])
			if n := seen[a]; n > 0 {
				anchors[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
			links = append(links, Link{File: file, Line: i + 1, Target: m[1]})
		}
	}
	return links, anchors
}

// Slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped, spaces turned into hyphens.
func Slug(heading string) string {
	h := strings.ToLower(strings.TrimSpace(heading))
	h = strings.NewReplacer("`", "", "*", "").Replace(h)
	// A link in a heading counts by its text.
	h = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	h = slugDrop.ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// External reports whether a target leaves the repository (a URL or a mail
// address), which this check does not follow.
func External(target string) bool {
	return strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:")
}

// Check returns one message per broken relative link in the given Markdown
// files (paths relative to root): a missing file or directory, or an #anchor
// that no heading of the Markdown file it names makes.
func Check(root string, files []string) ([]string, error) {
	anchorsOf := map[string]map[string]bool{}
	linksOf := map[string][]Link{}
	load := func(rel string) (map[string]bool, error) {
		if a, ok := anchorsOf[rel]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		l, a := Parse(rel, string(b))
		anchorsOf[rel], linksOf[rel] = a, l
		return a, nil
	}
	var broken []string
	for _, f := range files {
		if _, err := load(f); err != nil {
			return nil, err
		}
		for _, l := range linksOf[f] {
			if External(l.Target) {
				continue
			}
			path, anchor, _ := strings.Cut(l.Target, "#")
			target := f
			if path != "" {
				if strings.HasPrefix(path, "/") {
					broken = append(broken, l.String()+": absolute path; use a path relative to "+f)
					continue
				}
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f), path)))
				if strings.HasPrefix(target, "../") {
					broken = append(broken, l.String()+": leaves the repository")
					continue
				}
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					broken = append(broken, l.String()+": no such file or directory "+target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			a, err := load(target)
			if err != nil {
				broken = append(broken, l.String()+": "+err.Error())
				continue
			}
			if !a[anchor] {
				broken = append(broken, l.String()+": no heading makes #"+anchor+" in "+target)
			}
		}
	}
	return broken, nil
}
