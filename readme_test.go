package pacer_test

import (
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEProgram keeps the program README.md opens with the same as
// Example, so that the program compiles and prints what Example's output
// says: it is gofmt'd, its imports are Example's file's, and its main's
// body is Example's without the output comment.
func TestREADMEProgram(t *testing.T) {
	src, err := os.ReadFile("README.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(src)
	require.NotNil(t, block, "README.md has no ```go block")
	prog := block[1]
	formatted, err := format.Source(prog)
	require.NoError(t, err)
	require.Equal(t, string(formatted), string(prog), "the README's program is not gofmt'd")

	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "README.md's program", prog, parser.ParseComments)
	require.NoError(t, err)
	require.Equal(t, "main", f.Name.Name, "the README's program is a package main")
	var main *ast.FuncDecl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			require.Equal(t, "main", d.Name.Name, "the README's program declares only main")
			main = d
		case *ast.GenDecl:
			require.Equal(t, token.IMPORT, d.Tok, "the README's program declares only main")
		}
	}
	require.NotNil(t, main, "the README's program has no main")

	exSrc, err := os.ReadFile("example_readme_test.go")
	require.NoError(t, err)
	ex, err := parser.ParseFile(fset, "example_readme_test.go", exSrc, parser.ParseComments)
	require.NoError(t, err)
	var example *ast.FuncDecl
	for _, d := range ex.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Name.Name == "Example" {
			example = d
		}
	}
	require.NotNil(t, example, "example_readme_test.go has no Example")

	require.Equal(t, imports(ex), imports(f), "the README's program imports what example_readme_test.go does")
	want, _, found := strings.Cut(body(fset, exSrc, example), "\t// Output:")
	if !found {
		want, _, found = strings.Cut(want, "\t// Unordered output:")
	}
	require.True(t, found, "Example has no output comment")
	require.Equal(t, strings.TrimSpace(want), strings.TrimSpace(body(fset, prog, main)),
		"the README's main is not Example's body")
}

// imports returns the import paths of f, each after its name if it has one.
func imports(f *ast.File) []string {
	var paths []string
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		if s.Name != nil {
			p = s.Name.Name + " " + p
		}
		paths = append(paths, p)
	}
	return paths
}

// body returns the text of fn's body in src, between its braces.
func body(fset *token.FileSet, src []byte, fn *ast.FuncDecl) string {
	from := fset.Position(fn.Body.Lbrace).Offset + 1
	to := fset.Position(fn.Body.Rbrace).Offset
	return string(src[from:to])
}

// TestREADMELinks checks that every relative link in README.md names a
// file or directory of the repository.
func TestREADMELinks(t *testing.T) {
	src, err := os.ReadFile("README.md")
	require.NoError(t, err)
	links := regexp.MustCompile(`\]\(([^)#]+)(#[^)]*)?\)`).FindAllSubmatch(src, -1)
	require.NotEmpty(t, links)
	for _, l := range links {
		target := string(l[1])
		if strings.Contains(target, "://") {
			continue
		}
		_, err := os.Stat(filepath.FromSlash(target))
		require.NoError(t, err, "README.md links to %s", target)
	}
}
