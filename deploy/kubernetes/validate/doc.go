// Package validate checks deploy/kubernetes: its test decodes every
// manifest strictly into the k8s.io/api (and Prometheus Operator) types
// and checks the fields numairqd depends on against the daemon's real
// flags, and builds the binary with the Dockerfile's build line.
//
// It is a module of its own, so that k8s.io/api and its dependencies
// never enter numairqd's go.mod; the main module's ./... does not reach
// it. Run it with
//
//	cd deploy/kubernetes/validate && go test ./...
package validate
