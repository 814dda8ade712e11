package load

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Error is one problem of the input.
type Error struct {
	// Source is the stream's name, "" for Parse.
	Source string
	// Document is the 1-based index of the document in its source, 0 when
	// the problem is not tied to a document.
	Document int
	// Item is the 1-based index in a List document, 0 outside a List.
	Item int
	// Kind and Name identify the object ("namespace/name" for namespaced
	// kinds) when known.
	Kind, Name string
	// Message describes the problem, starting with the offending field
	// when there is one.
	Message string
}

// Error renders "<source>: document <d>, item <i> (<Kind> <name>): <message>",
// leaving out the parts that are unknown, with its unprintable characters
// escaped (printable).
func (e *Error) Error() string {
	return printable(e.render())
}

// render is Error before escaping.
func (e *Error) render() string {
	var where []string
	if e.Document > 0 {
		doc := fmt.Sprintf("document %d", e.Document)
		if e.Item > 0 {
			doc += fmt.Sprintf(", item %d", e.Item)
		}
		where = append(where, doc)
	}
	switch {
	case e.Kind != "" && e.Name != "":
		where = append(where, fmt.Sprintf("(%s %s)", e.Kind, e.Name))
	case e.Kind != "":
		where = append(where, fmt.Sprintf("(%s)", e.Kind))
	}
	loc := strings.Join(where, " ")
	switch {
	case e.Source != "" && loc != "":
		loc = e.Source + ": " + loc
	case e.Source != "":
		loc = e.Source
	}
	if loc == "" {
		return e.Message
	}
	if e.Message == "" {
		return loc
	}
	return loc + ": " + e.Message
}

// printable escapes the characters of s that are not printable (a
// newline, a terminal escape) as Go escapes them ("\n", "\x1b"), so that
// a problem is one line and an input cannot drive the terminal.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// Errors is every problem found in an input, in input order.
type Errors []*Error

// Error joins the problems, one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// IsInputError reports whether err (or an error it wraps) is an Errors
// value: a problem of the input rather than of reading it.
func IsInputError(err error) bool {
	var es Errors
	return errors.As(err, &es)
}
