package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	sd "github.com/coreos/go-systemd/v22/daemon"
	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/daemon"
)

// sdNotifier speaks systemd's notify protocol; a no-op without
// NOTIFY_SOCKET.
type sdNotifier struct{ log *zap.Logger }

func (n sdNotifier) Notify(state string) {
	if _, err := sd.SdNotify(false, state); err != nil {
		n.log.Warn("sd_notify failed", zap.Error(err))
	}
}

func runDaemon(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	cfgPath := fl.String("config", "", configFlagHelp)
	sysfs := fl.String("sysfs", "/sys", "sysfs root to read")
	procfs := fl.String("procfs", "/proc", "procfs root to read and write (/proc/irq)")
	etc := fl.String("etc", "/etc", "where irqbalance_env_file: auto looks for sysconfig/irqbalance and default/irqbalance")
	listen := fl.String("listen", "", "metrics/HTTP address, overriding the config's listen")
	dryRun := fl.Bool("dry-run", false, "plan and log the writes, write nothing: mode observe, whatever the config says")
	oneshot := fl.Bool("oneshot", false, "run one round and exit; non-zero status if an IRQ could not be placed")
	noEvents := fl.Bool("no-events", false, "do not listen to kernel uevents, link and channel changes (resync and SIGHUP only)")
	logLevel := fl.String("log.level", "info", "log level: debug, info, warn or error")
	logFormat := fl.String("log.format", "auto", "log format: auto, console (colour only on a terminal), json or journald")
	lockPath := fl.String("lock-file", defaultLockFile, `lock held while writing affinities, so only one numairqd runs per host ("" disables; --dry-run takes NAME.dry-run.lock instead, which only tells numairqd reload its pid)`)
	reloadStatus := fl.String("reload-status", defaultReloadStatus, `file where each reload's outcome is recorded, for "numairqd reload" to wait on ("" disables)`)
	capturePath := fl.String("capture", "", captureFlagHelp+"; only with --dry-run, and listening to no kernel events")
	if code, done := parseArgs(fl, args, stdout, stderr, nil); done {
		return code
	}
	if *capturePath != "" && !*dryRun {
		fmt.Fprintf(stderr, "numairqd run: --capture %s: only with --dry-run (a capture is another machine: nothing to write)\n", *capturePath)
		return 2
	}
	if err := config.CheckListen(*listen); err != nil {
		fmt.Fprintf(stderr, "numairqd run: --listen: %v\n", err)
		return 2
	}
	log, err := newLogger(*logLevel, *logFormat, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "numairqd run: %v\n", err)
		return 2
	}
	defer log.Sync() //nolint:errcheck // nothing to do if stderr is gone

	// Before the capture is unpacked, so that SIGTERM removes it.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	src, code := openSource(fl, *capturePath, *sysfs, *procfs, *etc, stderr)
	if src == nil {
		return code
	}
	defer src.Close()
	b := thisBuild()
	opts := daemon.Options{
		Sysfs: src.roots.Sys, Procfs: src.roots.Proc, Etc: src.roots.Etc, Netdev: src.roots.Netdev, Queues: src.queues,
		Listen: *listen, DryRun: *dryRun, Events: !*noEvents && src.replay == nil, Log: log, Notify: sdNotifier{log},
		FitProcs: procsCfg.fit, Build: b.Build, Host: src.host,
	}
	opts.ConfigPath, opts.ConfigOptional = src.config(*cfgPath)
	if *reloadStatus != "" {
		opts.Reloaded = func(started uint64, rerr error) {
			if err := recordReload(*reloadStatus, started, rerr); err != nil {
				log.Warn("cannot record the reload", zap.Error(err))
			}
		}
	}
	d, err := daemon.New(opts)
	if err != nil {
		log.Error("cannot start", zap.Error(err))
		return 1
	}
	if *lockPath != "" && !*dryRun {
		lock, err := lockFile(*lockPath)
		if err != nil {
			log.Error("cannot start", zap.Error(err))
			return 1
		}
		defer lock.Close()
	} else if *lockPath != "" {
		// A dry run writes nothing and must not keep a daemon that writes
		// from starting; its own lock tells numairqd reload its pid.
		lock, err := lockFile(dryRunLock(*lockPath))
		if err != nil {
			log.Info("numairqd reload cannot find this dry run's pid; give it --pid", zap.Error(err))
		} else {
			defer lock.Close()
		}
	}
	fields := startFields(b, d, *listen, *dryRun, *oneshot)
	if *capturePath != "" {
		fields = append(fields, zap.String("capture", *capturePath))
	}
	log.Info("numairqd starting", fields...)
	if *oneshot {
		if err := d.Oneshot(ctx); err != nil {
			log.Error("oneshot", zap.Error(err))
			return 1
		}
		return 0
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	if err := d.Run(ctx, hup); err != nil {
		log.Error("daemon stopped", zap.Error(err))
		return 1
	}
	log.Info("numairqd stopped")
	return 0
}

// startFields are the start line's: the version, the address the
// daemon listens on and whether from --listen or the config (whose
// listen the config summary shows as written), and the summary.
func startFields(b build, d *daemon.Daemon, flagListen string, dryRun, oneshot bool) []zap.Field {
	listen, from := d.Listen(), "config"
	if flagListen != "" {
		from = "--listen"
	}
	if listen == "" || oneshot { // --oneshot serves nothing
		listen = "none"
	}
	return []zap.Field{zap.String("version", versionLine(b)), zap.String("listen", listen), zap.String("listen_from", from),
		zap.Bool("dry_run", dryRun), zap.String("mode", string(d.Mode())), zap.String("config", d.Config().Summary())}
}
