// Command image builds numairqd's container image from the repository,
// reproducibly and without a registry or a container engine: the static
// binary (CGO_ENABLED=0, -trimpath, -buildvcs=false) alone in one layer
// with fixed timestamps, owner and modes, on no base image, and a config
// whose created time is SOURCE_DATE_EPOCH or else the HEAD commit's time.
// It writes an oci-archive (a tar of an OCI image layout) that
// `podman load` reads, named with the reference the DaemonSet runs, and
// prints that reference and the manifest digest:
//
//	cd deploy/image && go run . -o /tmp/numairqd-image.tar
//
// It is a module of its own, so that go-containerregistry never enters
// numairqd's go.mod. Its test builds the image twice and compares the
// digests.
package main
