//go:build !unix

package capture

// openFileLimit is unknown where there is no RLIMIT_NOFILE.
func openFileLimit() int { return 0 }
