package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/lecture/natsbroker"
	"github.com/teach-dist/playground/runtime/sandbox"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/web"
	"github.com/teach-dist/playground/web/export"
	"github.com/teach-dist/playground/web/gate"
	"github.com/teach-dist/playground/web/lecturehttp"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/ratelimit"
)

// rateFlag is a ratelimit.Rate as a flag ("20/s:600", "off").
type rateFlag struct{ r *ratelimit.Rate }

func (f rateFlag) String() string {
	if f.r == nil {
		return ""
	}
	return f.r.String()
}

func (f rateFlag) Set(s string) error {
	r, err := ratelimit.ParseRate(s)
	if err != nil {
		return err
	}
	*f.r = r
	return nil
}

const serveUsage = `usage: playground serve [flags]

The web playground, with everything embedded. Operations (limits, health, metrics,
shutdown, pprof) are described in docs/operations.md.`

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	defAddr := ":8080"
	if p := os.Getenv("PORT"); p != "" {
		defAddr = ":" + p
	}
	addr := fs.String("addr", defAddr, "address to listen on (default :8080, or :$PORT)")
	maxSessions := fs.Int("max-sessions", 200, "live runs at once; past it new visitors see a 'server full' page")
	sessionShare := fs.Int("session-share", 0, "sessions one client (IPv4 address or IPv6 /64) keeps on a full server while another wants a place; 0: half of --max-sessions")
	exploreSlots := fs.Int("explore-slots", 2, "explorer searches at once; more wait in a queue fair across clients")
	exploreShare := fs.Int("explore-share", 1, "explorer slots one client holds while another waits")
	exploreQueue := fs.Int("explore-queue", 4, "explorer searches one client may have waiting")
	compareSlots := fs.Int("compare-slots", 2, "/compare computations at once; more wait in a queue fair across clients")
	compareShare := fs.Int("compare-share", 1, "/compare slots one client holds while another waits")
	compareQueue := fs.Int("compare-queue", 4, "/compare computations one client may have waiting")
	maxViewers := fs.Int("max-viewers", 64, "WebSocket viewers of one run at once (tabs on the same URL); past it a socket is refused with 'busy'")
	maxLectures := fs.Int("max-lectures", 50, "live lectures at once; past it 'No room for another lecture'")
	lectureShare := fs.Int("lecture-share", 0, "live lectures one client (IPv4 address or IPv6 /64) keeps on a full server while another wants one; 0: half of --max-lectures")
	maxFollowers := fs.Int("max-followers", lecture.Options{}.FollowerCap(), "followers of one lecture; past it a follower's socket is refused with 'busy'")
	followersPerClient := fs.Int("followers-per-client", 0, "places of one lecture (and answers to one question) one client address or IPv6 /64 may hold; 0: 40% of --max-followers (a hall of 300 behind one NAT fits)")
	sendBytes := fs.Int("send-queue-bytes", web.DefaultSendQueueBytes, "bytes queued for one WebSocket viewer that does not read; past it the viewer is dropped (1013) and counted in playground_slow_clients_dropped_total")
	idle := fs.Duration("idle", 10*time.Minute, "end a run nobody has watched for this long")
	rest := fs.Duration("hibernate-after", session.DefaultHibernateAfter, "hibernate a run that has been still (paused, unwatched or quiet) this long: it keeps only its recipe and is rebuilt by replay when next needed; 0: never")
	fs.DurationVar(rest, "rest", session.DefaultHibernateAfter, "the former name of --hibernate-after")
	shutdown := fs.Duration("shutdown-timeout", 10*time.Second, "on SIGTERM or SIGINT, how long requests in progress and WebSocket closes get before they are cut")
	trusted := fs.String("trusted-proxy", "", "behind a reverse proxy: its CIDRs (client address from X-Forwarded-For), or HEADER=CIDRs (from that header, e.g. X-Real-IP=10.0.0.0/8); empty: the TCP peer")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this loopback address (e.g. 127.0.0.1:6060); never on a public one")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json")
	logLevel := fs.String("log-level", "info", "least level logged: debug, info, warn or error")
	noLimits := fs.Bool("no-limits", false, "turn every per-client rate limit off (load tests on loopback)")
	brokerKind := fs.String("broker", "memory", "how lectures reach their followers: memory (this server only) or nats (followers on any of several servers; docs/deploy.md)")
	natsURL := fs.String("nats-url", "nats://127.0.0.1:4222", "with --broker nats: the NATS server, or several separated by commas")
	exportsAtOnce := fs.Int("export-concurrent", 4, "trace, ShiViz, timeline and costs exports replaying at once, server-wide; past it 503 with Retry-After")
	exportsPerClient := fs.Int("export-per-client", 2, "exports at once per client address (IPv6: per /64); past it 429 with Retry-After")
	exportTimeout := fs.Duration("export-timeout", 30*time.Second, "how long one export may replay; past it the export ends with a note naming the step it reached")
	exportMiB := fs.Int("export-max-mib", 32, "MiB one export may write; past it the export ends with a note naming the step it reached")
	exportEvents := fs.Int("export-max-events", 1_000_000, "events one export may carry; past it the export ends with a note naming the step it reached")
	exportCacheMiB := fs.Int("export-cache-mib", 64, "MiB of lectures' exports kept for their followers (computed once per presenter step)")
	publicURL := fs.String("public-url", os.Getenv("PUBLIC_URL"), "the address students reach this server at, the base of lectures' join links and QR codes (e.g. https://playground.example.edu); default $PUBLIC_URL, or the presenter's address (on localhost: this machine's network addresses, with a warning)")
	allowedHosts := fs.String("allowed-hosts", os.Getenv("ALLOWED_HOSTS"), "names (comma-separated) a request's Host may give besides IP addresses, localhost, this machine's name and the hosts of --public-url and --addr; * allows any (no defence against DNS rebinding); default $ALLOWED_HOSTS")
	cpuCores := fs.Float64("cpu-cores", 0, "processors the clients share (0: three quarters of GOMAXPROCS); when their work passes it, the runs of a client over its fair share are slowed")
	bodyTimeout := fs.Duration("body-timeout", web.DefaultBodyTimeout, "how long a request's body may take to arrive; past it the connection is closed")
	limits := ratelimit.DefaultLimits()
	fs.Var(rateFlag{&limits.Pages}, "rate-pages", "page loads per client address (N/UNIT:BURST, or off)")
	fs.Var(rateFlag{&limits.Sessions}, "rate-sessions", "new runs and lectures per client address")
	fs.Var(rateFlag{&limits.API}, "rate-api", "/api/… and /compare requests per client address")
	fs.Var(rateFlag{&limits.Sockets}, "rate-sockets", "WebSocket handshakes per client address")
	fs.Var(rateFlag{&limits.Commands}, "rate-commands", "WebSocket frames per connection")
	fs.Var(rateFlag{&limits.CommandsPerIP}, "rate-commands-ip", "WebSocket frames per client address, all its connections together")
	fs.Var(rateFlag{&limits.Strikes}, "rate-strikes", "refused frames a connection may send before it is closed with 1008")
	fs.Var(rateFlag{&limits.JoinGuesses}, "rate-join-guesses", "lecture codes that name no lecture, per client address (IPv6: per /64); past it every lookup is refused until one refills")
	fs.Var(rateFlag{&limits.Loads}, "rate-loads", "Starlark sources (edited rules) loaded because a client sent one not yet loaded, per client address (IPv6: per /64)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, serveUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"max-sessions", *maxSessions}, {"max-viewers", *maxViewers}, {"max-lectures", *maxLectures}, {"max-followers", *maxFollowers},
		{"send-queue-bytes", *sendBytes},
		{"export-concurrent", *exportsAtOnce}, {"export-per-client", *exportsPerClient}, {"export-max-mib", *exportMiB},
		{"export-max-events", *exportEvents}, {"export-cache-mib", *exportCacheMiB},
		{"explore-slots", *exploreSlots}, {"explore-share", *exploreShare}, {"explore-queue", *exploreQueue},
		{"compare-slots", *compareSlots}, {"compare-share", *compareShare}, {"compare-queue", *compareQueue}} {
		if c.v < 1 {
			return fmt.Errorf("serve: --%s: %d must be at least 1", c.name, c.v)
		}
	}
	if *sessionShare < 0 || *sessionShare > *maxSessions {
		return fmt.Errorf("serve: --session-share: %d must be between 0 (half) and --max-sessions", *sessionShare)
	}
	if *lectureShare < 0 || *lectureShare > *maxLectures {
		return fmt.Errorf("serve: --lecture-share: %d must be between 0 (half) and --max-lectures", *lectureShare)
	}
	if *idle < time.Second {
		return fmt.Errorf("serve: --idle: %v must be at least 1s", *idle)
	}
	if *rest != 0 && *rest < time.Second {
		return fmt.Errorf("serve: --hibernate-after: %v must be 0 (never) or at least 1s", *rest)
	}
	if *exportTimeout < time.Second {
		return fmt.Errorf("serve: --export-timeout: %v must be at least 1s", *exportTimeout)
	}
	if *cpuCores < 0 || *cpuCores > 4096 {
		return fmt.Errorf("serve: --cpu-cores: %v must be between 0 (three quarters of the processors) and 4096", *cpuCores)
	}
	if *bodyTimeout < 100*time.Millisecond {
		return fmt.Errorf("serve: --body-timeout: %v must be at least 100ms", *bodyTimeout)
	}
	var hosts []string
	for _, h := range strings.Split(*allowedHosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if h != "*" && (strings.ContainsAny(h, "/:@ ") || strings.Contains(h, "*")) {
			return fmt.Errorf("serve: --allowed-hosts (or $ALLOWED_HOSTS): %q is not a host name: give names such as playground.example.edu, without scheme or port, or * for any", h)
		}
		hosts = append(hosts, h)
	}
	if *shutdown < 100*time.Millisecond {
		return fmt.Errorf("serve: --shutdown-timeout: %v must be at least 100ms", *shutdown)
	}
	clientIP, err := ratelimit.ClientIP(*trusted)
	if err != nil {
		return fmt.Errorf("serve: --trusted-proxy: %w", err)
	}
	if *pprofAddr != "" {
		if *pprofAddr, err = ops.CheckLoopback(*pprofAddr); err != nil {
			return fmt.Errorf("serve: --pprof: %w", err)
		}
	}
	var public *url.URL
	if *publicURL != "" {
		if public, err = lecturehttp.ParsePublicURL(*publicURL); err != nil {
			return fmt.Errorf("serve: --public-url (or $PUBLIC_URL): %w", err)
		}
	}
	logger, err := newLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if *noLimits {
		limits = ratelimit.Limits{}
	}
	var broker lecture.Broker // nil: the web server's in-memory broker
	switch *brokerKind {
	case "memory":
		natsSet := false
		fs.Visit(func(f *flag.Flag) { natsSet = natsSet || f.Name == "nats-url" })
		if natsSet {
			return errors.New("serve: --nats-url needs --broker nats")
		}
	case "nats":
		nb, err := natsbroker.Connect(natsbroker.Options{URL: *natsURL, Logger: logger})
		if err != nil {
			return fmt.Errorf("serve: --nats-url: %w", err)
		}
		defer nb.Close() // after the server has ended its lectures
		broker = nb
	default:
		return fmt.Errorf("serve: --broker: %q is not memory or nats", *brokerKind)
	}
	// The server's own sandbox, closed as soon as the shutdown begins: calls in
	// progress fail at once (their runs stop, a load in progress fails) and waiting
	// ones never start, so no student's source holds the shutdown.
	box := sandbox.New(sandbox.Options{})
	defer box.Close()
	defer context.AfterFunc(ctx, box.Close)()
	srv := web.New(web.Options{
		Sandbox: box, MaxSessions: *maxSessions, SessionShare: *sessionShare, MaxViewers: *maxViewers, Idle: *idle, HibernateAfter: *rest, Logger: logger,
		Limits: limits, ClientIP: clientIP, ShutdownTimeout: *shutdown, SendQueueBytes: *sendBytes,
		Explore: web.ExploreLimits{AtOnce: *exploreSlots, Share: *exploreShare, Queue: *exploreQueue},
		Compare: compare.Options{Slots: *compareSlots, Share: *compareShare, Queue: *compareQueue},
		Lecture: lecture.Options{Max: *maxLectures, Share: *lectureShare, MaxFollowers: *maxFollowers, FollowersPerClient: *followersPerClient}, Broker: broker,
		PublicURL: public, AllowedHosts: hosts, BodyTimeout: *bodyTimeout, CPU: session.CPUOptions{Cores: *cpuCores},
		Exports: export.Options{Gate: gate.Limits{Concurrent: *exportsAtOnce, PerClient: *exportsPerClient, Timeout: *exportTimeout},
			MaxBytes: int64(*exportMiB) << 20, MaxEvents: *exportEvents, LectureCache: int64(*exportCacheMiB) << 20},
	})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var pprofErr error
	if *pprofAddr != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pprofErr = ops.ServePprof(ctx, *pprofAddr, func(bound string) {
				logger.Info("pprof listening", "addr", bound)
			})
			if pprofErr != nil {
				cancel() // a pprof that cannot listen stops the whole server: the operator asked for it
			}
		}()
	}
	err = srv.ListenAndServe(ctx, *addr, func(bound string) {
		host := bound
		if strings.HasPrefix(host, "[::]:") || strings.HasPrefix(host, "0.0.0.0:") {
			host = "localhost:" + host[strings.LastIndex(host, ":")+1:]
		}
		logger.Info("serving", "addr", bound, "maxSessions", *maxSessions, "limits", !*noLimits, "trustedProxy", *trusted)
		fmt.Fprintf(stdout, "playground: serving on http://%s/\n", host)
		if public != nil {
			fmt.Fprintf(stdout, "playground: students join lectures at %s/join\n", public)
		}
	})
	cancel()
	wg.Wait()
	if pprofErr != nil {
		return errors.Join(err, fmt.Errorf("serve: --pprof: %w", pprofErr))
	}
	return err
}

// newLogger is the server's structured log on stderr.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not text or json", format)
}

var _ flag.Value = rateFlag{}
