package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Repository is where the image is published; the DaemonSet names
// Repository:version.
const Repository = "ghcr.io/numairqd/numairqd"

// binPath is the binary's path in the image, the entrypoint.
const binPath = "usr/local/bin/numairqd"

// Image is a built image: the reference it is named with and its
// manifest digest.
type Image struct {
	Ref    string
	Digest v1.Hash
	img    v1.Image
}

// Version is the upstream part of deploy/debian/changelog's newest
// entry ("0.1.0" of "numairqd (0.1.0-1) unstable"), the version every
// build of the repository carries.
func Version(root string) (string, error) {
	p := filepath.Join(root, "deploy/debian/changelog")
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	m := regexp.MustCompile(`^numairqd \(([^)-]+)(?:-[^)]*)?\)`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s: no version on its first line", p)
	}
	return string(m[1]), nil
}

// Epoch is the time the image says it was created: SOURCE_DATE_EPOCH
// when set, else the HEAD commit's committer time.
func Epoch(root string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		cmd := exec.Command("git", "log", "-1", "--format=%ct")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return time.Time{}, fmt.Errorf("no SOURCE_DATE_EPOCH and no commit time from git in %s: %v", root, err)
		}
		s = strings.TrimSpace(string(out))
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// BuildBinary builds cmd/numairqd of the repository at root into out,
// static and free of build paths, for linux on this machine's
// architecture.
func BuildBinary(root, version, out string) error {
	ld := fmt.Sprintf("-s -w -X main.version=%s -X github.com/prometheus/common/version.Version=%s", version, version)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ld, "-o", out, "./cmd/numairqd")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=-mod=readonly")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v\n%s", root, err, b)
	}
	return nil
}

// layerTar is the single layer: the directories to the binary and the
// binary, root's, with fixed modes and modification times.
func layerTar(bin []byte, mtime time.Time) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := func(name string, typ byte, mode, size int64) {
		// Errors of a bytes.Buffer-backed writer are only of headers,
		// which are all well formed here; Close below reports any.
		_ = tw.WriteHeader(&tar.Header{Name: name, Typeflag: typ, Mode: mode, Size: size,
			ModTime: mtime, Format: tar.FormatPAX})
	}
	for _, d := range []string{"usr/", "usr/local/", "usr/local/bin/"} {
		hdr(d, tar.TypeDir, 0o755, 0)
	}
	hdr(binPath, tar.TypeReg, 0o755, int64(len(bin)))
	_, _ = tw.Write(bin)
	_ = tw.Close()
	return buf.Bytes()
}

// Build builds the image of the repository at root: the binary built
// into dir, put in a layer, with a config created at the epoch.
func Build(root, dir string) (*Image, error) {
	version, err := Version(root)
	if err != nil {
		return nil, err
	}
	epoch, err := Epoch(root)
	if err != nil {
		return nil, err
	}
	binFile := filepath.Join(dir, "numairqd")
	if err := BuildBinary(root, version, binFile); err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(binFile)
	if err != nil {
		return nil, err
	}
	layerData := layerTar(bin, epoch)
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerData)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: epoch}
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Author = ""
	cf.History = []v1.History{{Created: v1.Time{Time: epoch}, CreatedBy: "deploy/image: " + binPath}}
	cf.Config = v1.Config{
		User:       "0:0",
		Entrypoint: []string{"/" + binPath},
		Cmd:        []string{"run"},
		Labels: map[string]string{
			"org.opencontainers.image.title":   "numairqd",
			"org.opencontainers.image.version": version,
			"org.opencontainers.image.source":  "https://github.com/numairqd/numairqd",
		},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	return &Image{Ref: Repository + ":" + version, Digest: d, img: img}, nil
}

// WriteArchive writes the image as an oci-archive: a tar of an OCI
// image layout whose index names the image with its reference, every
// entry with the epoch's time and root's ownership.
func (im *Image) WriteArchive(w io.Writer) error {
	cf, err := im.img.ConfigFile()
	if err != nil {
		return err
	}
	mtime := cf.Created.Time
	manifest, err := im.img.RawManifest()
	if err != nil {
		return err
	}
	config, err := im.img.RawConfigFile()
	if err != nil {
		return err
	}
	cfgName, err := im.img.ConfigName()
	if err != nil {
		return err
	}
	layers, err := im.img.Layers()
	if err != nil {
		return err
	}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType:   types.OCIManifestSchema1,
			Size:        int64(len(manifest)),
			Digest:      im.Digest,
			Annotations: map[string]string{"org.opencontainers.image.ref.name": im.Ref},
		}},
	})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	file := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644,
			Size: int64(len(b)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	blob := func(h v1.Hash, b []byte) error { return file("blobs/sha256/"+h.Hex, b) }
	if err := blob(im.Digest, manifest); err != nil {
		return err
	}
	if err := blob(cfgName, config); err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		if err := blob(d, b); err != nil {
			return err
		}
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", index); err != nil {
		return err
	}
	return tw.Close()
}
