package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "", "the oci-archive to write (required)")
	root := flag.String("root", "../..", "the repository to build")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run . -o FILE [-root DIR]")
		os.Exit(2)
	}
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// run builds the image of root and writes it to out.
func run(root, out string) error {
	dir, err := os.MkdirTemp("", "numairqd-image")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	im, err := Build(root, dir)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := im.WriteArchive(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	fmt.Printf("%s %s@%s\n", out, im.Ref, im.Digest)
	return nil
}
