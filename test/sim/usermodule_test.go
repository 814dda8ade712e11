package sim_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeDoc is the guide the README links for simulating scale-ups in your
// own tests: the README's go.mod block, test file and sh block live there.
var readmeDoc = filepath.Join("..", "..", "docs", "library.md")

// readmeBlock returns the body of the only fenced block of readmeDoc whose
// opening fence is "```"+info and whose body contains marker.
func readmeBlock(t *testing.T, info, marker string) string {
	t.Helper()
	data, err := os.ReadFile(readmeDoc)
	require.NoError(t, err)
	var found []string
	for _, m := range regexp.MustCompile("(?ms)^```"+regexp.QuoteMeta(info)+"\n(.*?)^```$").FindAllStringSubmatch(string(data), -1) {
		if strings.Contains(m[1], marker) {
			found = append(found, m[1])
		}
	}
	require.Len(t, found, 1, "docs/library.md: fenced ```%s blocks containing %q", info, marker)
	return found[0]
}

// replaceLines returns the lines of the replace block of a go.mod text,
// trimmed.
func replaceLines(t *testing.T, gomod string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?ms)^replace \(\n(.*?)^\)`).FindStringSubmatch(gomod)
	require.NotNil(t, m, "no replace ( ... ) block in\n%s", gomod)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(m[1]), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// The go.mod block of docs/library.md (the README's guide) is the one of
// this module, with the Makefile's GONOSUMDB.
func TestReadmeGoModBlockMatchesOurs(t *testing.T) {
	block := readmeBlock(t, "go.mod", "replace (")
	ours, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	assert.Equal(t, replaceLines(t, string(ours)), replaceLines(t, block), "docs/library.md's replace lines against go.mod's")

	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	want := regexp.MustCompile(`(?m)^export GONOSUMDB := (\S+)$`).FindStringSubmatch(string(makefile))
	require.NotNil(t, want, "Makefile exports no GONOSUMDB")
	assert.Equal(t, want[1], gonosumdb(t, block), "docs/library.md's GONOSUMDB against the Makefile's")
}

// gonosumdb is the GONOSUMDB value the go.mod block names.
func gonosumdb(t *testing.T, block string) string {
	t.Helper()
	m := regexp.MustCompile(`GONOSUMDB=(\S+)`).FindStringSubmatch(block)
	require.NotNil(t, m, "docs/library.md's go.mod block names no GONOSUMDB=...")
	return m[1]
}

// A user's module made of exactly docs/library.md's go.mod block, a require of
// this module replaced by the checkout, our go.sum (what go mod tidy would
// write) and docs/library.md's test file builds and passes with its
// build tag, offline (GOPROXY=off) from the module and build caches this
// checkout uses. It takes about a minute with a warm
// build cache (mostly linking the test binary); -short skips it.
func TestReadmeUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and links a test binary of a throwaway module (about a minute)")
	}
	block := readmeBlock(t, "go.mod", "replace (")
	snippet := readmeBlock(t, "go", "func Test")
	tags := regexp.MustCompile(`go test (-tags \S+) `).FindStringSubmatch(readmeBlock(t, "sh", "go test"))
	require.NotNil(t, tags, "docs/library.md's sh block runs no go test -tags ...")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)

	dir := t.TempDir()
	gomod := "module example.com/usertests\n\ngo 1.24.0\n\nrequire github.com/spreadscale/spreadscale v0.0.0\n\n" +
		block + "\nreplace github.com/spreadscale/spreadscale => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "web_test.go"), []byte(snippet), 0o644))

	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off", "GOTOOLCHAIN=local",
		"GONOSUMDB="+gonosumdb(t, block))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// No go mod tidy: it also resolves the tests of every dependency,
	// whose modules this checkout never downloaded. -mod=mod adds the
	// requirements the build needs from the module graph.
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"test", "-count=1"}, strings.Fields(tags[1])...), "./...")...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go test %s in the user's module:\n%s\ngo.mod:\n%s", tags[1], out, gomod)
	assert.Contains(t, string(out), "ok  \texample.com/usertests")
	t.Logf("go test %s in the user's module: %s\n%s", tags[1], time.Since(start).Round(time.Second), out)
}

// docs/library.md's test file is readme_test.go, apart from the package name.
func TestReadmeSnippetIsCompiledHere(t *testing.T) {
	here, err := os.ReadFile("readme_test.go")
	require.NoError(t, err)
	snippet := readmeBlock(t, "go", "func Test")
	_, body, ok := strings.Cut(snippet, "\n")
	require.True(t, ok)
	assert.Equal(t, "package sim_test\n"+body, string(here), "docs/library.md's test file, as package sim_test, against readme_test.go")
}
