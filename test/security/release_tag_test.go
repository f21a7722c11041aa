package security

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krtt-dev/krtt/test/framework/localcp"
)

// releaseFiles are what `make release VERSION=...` tags with; the test
// puts the working tree's copies into its clone so it checks them, not the
// last commit's.
var releaseFiles = []string{"Makefile", "hack/release-tag.sh"}

// TestReleaseTag runs `make release VERSION=...` in a clone of the
// checkout, so the real repository's tags are never touched, and checks
// that a release is an annotated tag Go resolves, made only from a clean
// tree and a vMAJOR.MINOR.PATCH version, and never pushed.
func TestReleaseTag(t *testing.T) {
	root := localcp.RepoRoot()
	repo := filepath.Join(t.TempDir(), "krtt")
	gitEnv := append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=release test", "GIT_AUTHOR_EMAIL=release@example.com",
		"GIT_COMMITTER_NAME=release test", "GIT_COMMITTER_EMAIL=release@example.com")
	run := func(dir string, env []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(t *testing.T, dir, name string, args ...string) string {
		t.Helper()
		out, err := run(dir, gitEnv, name, args...)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(out)
	}
	must(t, root, "git", "clone", "-q", root, repo)
	for _, f := range releaseFiles {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if must(t, repo, "git", "status", "--porcelain") != "" {
		must(t, repo, "git", "add", "-A")
		must(t, repo, "git", "commit", "-q", "-m", "the working tree's release files")
	}
	realTags := must(t, root, "git", "tag", "-l")

	release := func(t *testing.T, version string) (string, string, error) {
		dist := t.TempDir()
		args := []string{"--no-print-directory", "release", "DIST=" + dist}
		if version != "" {
			args = append(args, "VERSION="+version)
		}
		out, err := run(repo, gitEnv, "make", args...)
		return out, dist, err
	}
	refused := func(t *testing.T, version, why string) {
		t.Helper()
		tags := must(t, repo, "git", "tag", "-l")
		out, dist, err := release(t, version)
		if err == nil {
			t.Fatalf("make release VERSION=%s succeeded, want it refused (%s)\n%s", version, why, out)
		}
		if !strings.Contains(out, why) {
			t.Errorf("make release VERSION=%s: output lacks %q\n%s", version, why, out)
		}
		if after := must(t, repo, "git", "tag", "-l"); after != tags {
			t.Errorf("make release VERSION=%s was refused but the tags changed: %q -> %q", version, tags, after)
		}
		if _, err := os.Stat(filepath.Join(dist, "install.yaml")); err == nil {
			t.Errorf("make release VERSION=%s was refused but wrote install.yaml", version)
		}
	}

	t.Run("versions other than vMAJOR.MINOR.PATCH are refused", func(t *testing.T) {
		for _, v := range []string{"v0.3", "0.3.0", "v0.3.0-rc.1", "v01.2.3", "latest"} {
			refused(t, v, "is not vMAJOR.MINOR.PATCH")
		}
		refused(t, "v2.0.0", "needs the module path to end in /v2")
	})

	t.Run("a dirty tree is refused", func(t *testing.T) {
		readme := filepath.Join(repo, "README.md")
		b, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(readme, append(b, "\nedited\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		refused(t, "v0.3.0", "the working tree is not clean")
		must(t, repo, "git", "checkout", "--", "README.md")
		stray := filepath.Join(repo, "stray.txt")
		if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		refused(t, "v0.3.0", "?? stray.txt")
		if err := os.Remove(stray); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("without VERSION nothing is tagged", func(t *testing.T) {
		out, dist, err := release(t, "")
		if err != nil {
			t.Fatalf("make release: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dist, "install.yaml")); err != nil {
			t.Error(err)
		}
		if tags := must(t, repo, "git", "tag", "-l"); tags != "" {
			t.Errorf("make release without VERSION tagged: %q", tags)
		}
		// Only the command line asks for a tag: a VERSION left in the
		// environment names the image and nothing more.
		dist = t.TempDir()
		out, err = run(repo, append(gitEnv, "VERSION=v0.4.0"), "make", "--no-print-directory", "release", "DIST="+dist)
		if err != nil {
			t.Fatalf("VERSION=v0.4.0 make release: %v\n%s", err, out)
		}
		if !strings.Contains(out, "for ghcr.io/krtt-dev/krtt-operator:v0.4.0") {
			t.Errorf("VERSION from the environment does not name the image:\n%s", out)
		}
		if tags := must(t, repo, "git", "tag", "-l"); tags != "" {
			t.Errorf("VERSION from the environment tagged: %q", tags)
		}
	})

	head := must(t, repo, "git", "rev-parse", "HEAD")
	t.Run("a clean tree is tagged, annotated, and the image named after it", func(t *testing.T) {
		out, dist, err := release(t, "v0.3.0")
		if err != nil {
			t.Fatalf("make release VERSION=v0.3.0: %v\n%s", err, out)
		}
		if got := must(t, repo, "git", "cat-file", "-t", "v0.3.0"); got != "tag" {
			t.Errorf("v0.3.0 is a %s, want an annotated tag", got)
		}
		if got := must(t, repo, "git", "rev-parse", "v0.3.0^{commit}"); got != head {
			t.Errorf("v0.3.0 names %s, want HEAD %s", got, head)
		}
		var image string
		for _, c := range deployment(t, objects(t, filepath.Join(dist, "install.yaml")), "krtt-operator").Spec.Template.Spec.Containers {
			if c.Name == "manager" {
				image = c.Image
			}
		}
		if image != "ghcr.io/krtt-dev/krtt-operator:v0.3.0" {
			t.Errorf("install.yaml runs %q, want the image of VERSION", image)
		}
		if !strings.Contains(out, "git push origin v0.3.0") {
			t.Errorf("the output does not say how to publish the tag:\n%s", out)
		}
		// The clone's origin is the real checkout: a push would land there.
		if remote := must(t, repo, "git", "ls-remote", "--tags", "origin"); remote != "" {
			t.Errorf("the tag reached origin: %s", remote)
		}
	})

	t.Run("the same version again on the same commit is accepted", func(t *testing.T) {
		out, _, err := release(t, "v0.3.0")
		if err != nil || !strings.Contains(out, "already tagged v0.3.0") {
			t.Fatalf("make release VERSION=v0.3.0 again: %v\n%s", err, out)
		}
	})

	t.Run("go resolves the tag as a version of the module", func(t *testing.T) {
		consumer := t.TempDir()
		gitconfig := filepath.Join(consumer, "gitconfig")
		// Go fetches github.com/krtt-dev/krtt with git; this sends it to the
		// clone instead of the network.
		cfg := "[url \"file://" + repo + "\"]\n\tinsteadOf = https://github.com/krtt-dev/krtt\n"
		if err := os.WriteFile(gitconfig, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(consumer, "go.mod"), []byte("module example.com/consumer\n\ngo 1.26.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+gitconfig,
			"GOPROXY=direct", "GOSUMDB=off", "GOTOOLCHAIN=local", "GOFLAGS=-modcacherw",
			"GOMODCACHE="+filepath.Join(consumer, "modcache"))
		out, err := run(consumer, env, "go", "mod", "download", "-json", "github.com/krtt-dev/krtt@v0.3.0")
		if err != nil {
			t.Fatalf("go mod download: %v\n%s", err, out)
		}
		var mod struct{ Version, Dir, Error string }
		if err := json.Unmarshal([]byte(out), &mod); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if mod.Version != "v0.3.0" || mod.Error != "" {
			t.Fatalf("go mod download: version %q, error %q", mod.Version, mod.Error)
		}
		if _, err := os.Stat(filepath.Join(mod.Dir, "engine")); err != nil {
			t.Errorf("the downloaded module lacks the engine: %v", err)
		}
		// examples/ is a module of its own, so it is not part of krtt's.
		if _, err := os.Stat(filepath.Join(mod.Dir, "examples")); err == nil {
			t.Errorf("the downloaded module holds examples/, a nested module")
		}
	})

	t.Run("a tag naming another commit is refused", func(t *testing.T) {
		must(t, repo, "git", "commit", "-q", "--allow-empty", "-m", "after the release")
		refused(t, "v0.3.0", "tag v0.3.0 already names "+head)
	})

	// The examples module builds from the checkout through its replace, so
	// a release does not change what it needs.
	t.Run("the examples module still resolves", func(t *testing.T) {
		if out, err := run(filepath.Join(repo, "examples"), os.Environ(), "go", "list", "./..."); err != nil {
			t.Fatalf("go list ./... in examples: %v\n%s", err, out)
		}
	})

	if after := must(t, root, "git", "tag", "-l"); after != realTags {
		t.Errorf("the real repository's tags changed: %q -> %q", realTags, after)
	}
}
