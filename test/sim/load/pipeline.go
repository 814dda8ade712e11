package load

import (
	"io"
	"runtime"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// docJob is a document of a source being prepared: prep is set once done
// is closed. A job with readErr holds no document: reading the source
// ended there with that error.
type docJob struct {
	at      origin
	data    []byte
	prep    *preparedDocument
	done    chan struct{}
	readErr error
}

// readPrepared reads the documents of the source name from r, one after
// another, and prepares them (prepareDocument) on GOMAXPROCS workers. It
// returns the jobs in input order, a bounded number of them ahead of the
// reader's consumer; the channel is closed after the last document, or
// after the job holding the error that ended reading. The consumer must
// take every job until the channel is closed.
func readPrepared(name string, r *utilyaml.YAMLReader) <-chan *docJob {
	workers := runtime.GOMAXPROCS(0)
	ordered := make(chan *docJob, 64*workers)
	work := make(chan *docJob, 64*workers)
	for range workers {
		go func() {
			for j := range work {
				j.prep = prepareDocument(j.at, j.data)
				j.data = nil
				close(j.done)
			}
		}()
	}
	go func() {
		defer close(ordered)
		defer close(work)
		for doc := 1; ; doc++ {
			data, err := r.Read()
			if err == io.EOF {
				return
			}
			j := &docJob{at: origin{source: name, doc: doc}, done: make(chan struct{})}
			if err != nil {
				j.readErr = err
				close(j.done)
				ordered <- j
				return
			}
			j.data = data
			ordered <- j
			work <- j
		}
	}()
	return ordered
}
