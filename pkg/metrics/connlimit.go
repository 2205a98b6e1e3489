package metrics

import (
	"net"
	"sync"
)

// maxConns bounds the HTTP server's open connections. Each costs a
// goroutine and its buffers, about 20 KiB, so 128 of them stay under
// 3 MiB however many clients connect; more wait in the kernel's accept
// queue, not in the daemon. 128 is well above the 16 + 4 requests the
// handlers run at once plus the ones queued behind them.
const maxConns = 128

// connLimit is a listener that accepts a connection only while fewer
// than n it accepted are open: golang.org/x/net/netutil.LimitListener,
// without the module.
type connLimit struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func limitConns(ln net.Listener, n int) net.Listener {
	return &connLimit{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection.
func (l *connLimit) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (l *connLimit) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitedConn gives its slot back on its first Close.
type limitedConn struct {
	net.Conn
	release func()
	once    sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
