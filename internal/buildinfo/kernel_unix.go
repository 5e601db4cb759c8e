//go:build unix

package buildinfo

import "golang.org/x/sys/unix"

// kernel returns the kernel's name and release from uname(2), e.g.
// "Linux 6.1.0-18-amd64".
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}
