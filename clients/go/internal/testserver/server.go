// Package testserver runs a real `leasehold server` for the Go client's
// tests: a child process on 127.0.0.1 with a free port and a data dir in
// the test's temporary directory, stopped when the test ends. The binary is
// $LEASEHOLD_BINARY (tests/go/CMakeLists.txt sets it); without it the
// tests are skipped.
package testserver

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Server is one server process. Methods are for the test's goroutine.
type Server struct {
	t       testing.TB
	binary  string
	dataDir string
	port    int
	flags   []string
	cmd     *exec.Cmd
	exited  chan struct{}
	paused  bool
}

// Binary is $LEASEHOLD_BINARY; the test is skipped when it is not set.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("LEASEHOLD_BINARY")
	if bin == "" {
		t.Skip("LEASEHOLD_BINARY is not set (ctest -R go_client sets it to the built server)")
	}
	return bin
}

// Start runs a server with extra flags (e.g. --requirepass-file) on a free
// port; it is stopped (SIGCONT first if paused, then SIGKILL) when the test
// ends.
func Start(t testing.TB, flags ...string) *Server {
	t.Helper()
	s := &Server{t: t, binary: Binary(t), dataDir: filepath.Join(t.TempDir(), "data"), flags: flags}
	t.Cleanup(s.Kill)
	for attempt := 0; attempt < 5; attempt++ {
		s.port = FreePort(t)
		if s.launch() {
			return s
		}
	}
	t.Fatalf("the server never listened; its stderr: %s", s.stderr())
	return nil
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("no free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Endpoint is "127.0.0.1:<port>".
func (s *Server) Endpoint() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Port is the server's port.
func (s *Server) Port() int { return s.port }

// Kill ends the server at once (SIGKILL), as a crash would. Idempotent.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	if s.paused {
		s.Resume()
	}
	s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart starts the server again on the same port, data dir and flags.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	if !s.launch() {
		s.t.Fatalf("the restarted server never listened on port %d; its stderr: %s", s.port, s.stderr())
	}
}

// Pause (SIGSTOP) leaves the server alive but answering nothing; Resume
// (SIGCONT) lets it go on.
func (s *Server) Pause() {
	s.cmd.Process.Signal(syscall.SIGSTOP)
	s.paused = true
}

func (s *Server) Resume() {
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.paused = false
}

func (s *Server) stderrPath() string { return s.dataDir + ".stderr" }

func (s *Server) stderr() string {
	b, _ := os.ReadFile(s.stderrPath())
	return string(b)
}

// launch spawns the server and waits (bounded) for it to accept connections.
func (s *Server) launch() bool {
	args := append([]string{"server", "--listen", s.Endpoint(), "--data-dir", s.dataDir, "--log-level", "warn"}, s.flags...)
	errFile, err := os.OpenFile(s.stderrPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatalf("stderr file: %v", err)
	}
	defer errFile.Close()
	cmd := exec.Command(s.binary, args...)
	cmd.Stderr = errFile
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("cannot run %s: %v", s.binary, err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		cmd.Wait()
		close(exited)
	}(s.exited)
	deadline := time.Now().Add(Scaled(10 * time.Second))
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			s.cmd = nil
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", s.Endpoint(), 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(10 * time.Millisecond) // polling the port, not synchronising on time
	}
	s.Kill()
	return false
}

// Scaled is d times LEASEHOLD_TEST_TIME_SCALE (default 1), for upper bounds
// on how long something may take on a busy machine (testkit/eventually.h).
func Scaled(d time.Duration) time.Duration {
	if f, err := strconv.ParseFloat(os.Getenv("LEASEHOLD_TEST_TIME_SCALE"), 64); err == nil && f >= 1 {
		return time.Duration(float64(d) * f)
	}
	return d
}

// Eventually polls cond every 10ms until it holds (true) or Scaled(timeout)
// passes (false): the way tests wait for a condition, never by sleeping.
func Eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(Scaled(timeout))
	for {
		if cond() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Require is Eventually that fails the test with `what` on timeout.
func Require(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Eventually(timeout, cond) {
		t.Fatalf("%s: not within %v", what, Scaled(timeout))
	}
}

// Receive waits for ch to yield or close, at most Scaled(timeout).
func Receive[T any](t testing.TB, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Scaled(timeout)):
		t.Fatalf("%s: not within %v", what, Scaled(timeout))
	}
	var zero T
	return zero
}

// GoBuild builds the package at pkg (a path relative to the module root,
// e.g. "./cmd/leasehold-go-lock") into the test's temporary directory and
// returns the binary's path. It runs the same `go` as the test, offline.
func GoBuild(t testing.TB, moduleRoot, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command(goTool(), "build", "-o", out, pkg)
	cmd.Dir = moduleRoot
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// goTool is the go command of the toolchain running the test.
func goTool() string { return filepath.Join(runtime.GOROOT(), "bin", "go") }

// String describes the server for failure messages.
func (s *Server) String() string { return fmt.Sprintf("leasehold server on %s", s.Endpoint()) }
