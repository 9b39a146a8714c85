package leasehold

import (
	"fmt"
	"strconv"
)

// Decoding replies (redigo's RESP2 shapes, which resp3.go also produces)
// into this package's types. A reply of an unexpected shape is ErrInternal.

// Holder is one holder of a lock as LOCK.INFO reports it.
type Holder struct {
	Session uint64
	Owner   string
	Token   uint64
	HeldMs  int64
}

// Waiter is one queued request of a lock, in FIFO order.
type Waiter struct {
	Session  uint64
	Owner    string
	Mode     string
	WaitedMs int64
}

// LockInfo is a lock's state (LOCK.INFO, docs/protocol.md "Locks").
type LockInfo struct {
	Name      string
	Mode      string // "exclusive", "shared" or "semaphore"
	Limit     int64
	Holders   []Holder
	Waiters   []Waiter
	LastToken uint64
	DelayMs   int64 // lock-delay remaining, 0 if none
}

// FencedValue is what FENCE.GET returns: a value and the token that wrote it.
type FencedValue struct {
	Value []byte
	Token uint64
}

func unexpected(what string, reply interface{}) error {
	text := fmt.Sprintf("%v", reply)
	if len(text) > 200 {
		text = text[:200]
	}
	return newError(ErrInternal, fmt.Sprintf("%s: unexpected reply %s", what, text))
}

func asInt(reply interface{}, what string) (int64, error) {
	switch v := reply.(type) {
	case int64:
		return v, nil
	case []byte:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, unexpected(what, reply)
}

func asText(reply interface{}) string {
	switch v := reply.(type) {
	case []byte:
		return string(v)
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

func asMap(reply interface{}, what string) (map[string]interface{}, error) {
	items, ok := reply.([]interface{})
	if !ok || len(items)%2 != 0 {
		return nil, unexpected(what, reply)
	}
	m := make(map[string]interface{}, len(items)/2)
	for i := 0; i < len(items); i += 2 {
		m[asText(items[i])] = items[i+1]
	}
	return m, nil
}

func asArray(reply interface{}, what string) ([]interface{}, error) {
	if reply == nil {
		return nil, nil
	}
	items, ok := reply.([]interface{})
	if !ok {
		return nil, unexpected(what, reply)
	}
	return items, nil
}

func optInt(m map[string]interface{}, key string) int64 {
	n, _ := asInt(m[key], key)
	return n
}

// decodeLockInfo decodes LOCK.INFO's lock map; nil for a nil reply.
func decodeLockInfo(reply interface{}) (*LockInfo, error) {
	if reply == nil {
		return nil, nil
	}
	m, err := asMap(reply, "LOCK.INFO")
	if err != nil {
		return nil, err
	}
	info := &LockInfo{Name: asText(m["name"]), Mode: asText(m["mode"]), Limit: optInt(m, "limit"),
		LastToken: uint64(optInt(m, "last_token")), DelayMs: optInt(m, "delay_ms")}
	holders, err := asArray(m["holders"], "LOCK.INFO holders")
	if err != nil {
		return nil, err
	}
	for _, h := range holders {
		hm, err := asMap(h, "LOCK.INFO holder")
		if err != nil {
			return nil, err
		}
		info.Holders = append(info.Holders, Holder{Session: uint64(optInt(hm, "session")), Owner: asText(hm["owner"]),
			Token: uint64(optInt(hm, "token")), HeldMs: optInt(hm, "held_ms")})
	}
	waiters, err := asArray(m["waiters"], "LOCK.INFO waiters")
	if err != nil {
		return nil, err
	}
	for _, w := range waiters {
		wm, err := asMap(w, "LOCK.INFO waiter")
		if err != nil {
			return nil, err
		}
		info.Waiters = append(info.Waiters, Waiter{Session: uint64(optInt(wm, "session")), Owner: asText(wm["owner"]),
			Mode: asText(wm["mode"]), WaitedMs: optInt(wm, "waited_ms")})
	}
	return info, nil
}

// decodeFenced decodes FENCE.GET's [value, token]; nil for a nil reply.
func decodeFenced(reply interface{}) (*FencedValue, error) {
	if reply == nil {
		return nil, nil
	}
	items, ok := reply.([]interface{})
	if !ok || len(items) != 2 {
		return nil, unexpected("FENCE.GET", reply)
	}
	value, ok := items[0].([]byte)
	if !ok {
		return nil, unexpected("FENCE.GET value", items[0])
	}
	token, err := asInt(items[1], "FENCE.GET token")
	if err != nil {
		return nil, err
	}
	return &FencedValue{Value: value, Token: uint64(token)}, nil
}
