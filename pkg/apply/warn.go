package apply

import "go.uber.org/zap"

// warnOnce logs a failed XPS write or NAPI pin at Warn the first time
// key fails with errno, and at Debug while it keeps failing so: a lasting
// refusal would log every queue every round. A success re-arms it.
func (a *Applier) warnOnce(key, errno, msg string, fields ...zap.Field) {
	if a.warned == nil {
		a.warned = map[string]string{}
	}
	if last, ok := a.warned[key]; ok && last == errno {
		a.log.Debug(msg, fields...)
		return
	}
	a.warned[key] = errno
	a.log.Warn(msg, fields...)
}

// settled re-arms warnOnce for key after a success.
func (a *Applier) settled(key string) { delete(a.warned, key) }
