//go:build !windows

package participant

import "os"

// syncDir makes the entries of dir (a rename into it) durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
