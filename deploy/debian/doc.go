// Package debian holds the Debian package's control files, which
// scripts/deb.sh fills in and packs. It has no code: its test checks
// that the package's Maintainer, the copyright's Upstream-Contact and
// the changelog's trailer name the project and the contact address
// the README documents, so that the four cannot drift apart.
package debian
