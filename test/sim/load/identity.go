package load

// uniqueUID records that the object at o has metadata.uid uid; a second
// object with the same uid is an error naming the first (the API server
// gives every object its own uid, and the simulation's volume binder and
// informers key objects by it). An empty uid is not recorded.
func (l *loader) uniqueUID(at origin, uid string) {
	if uid == "" {
		return
	}
	if first, dup := l.uids[uid]; dup {
		l.fail(at, "metadata.uid: %s is already the uid of %s %s (%s)", uid, first.kind, first.name, first.where())
		return
	}
	l.uids[uid] = at
}

// define records the definition of kind key at o; a second definition is
// an error naming the first.
func (l *loader) define(at origin, kind, key string) bool {
	k := kind + " " + key
	if first, dup := l.defined[k]; dup {
		l.fail(at, "duplicate %s %s: already defined in %s", kind, key, first.where())
		return false
	}
	l.defined[k] = at
	return true
}
