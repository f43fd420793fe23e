package dev.parley.simulator;

import dev.parley.simulator.internal.Admission;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * How a {@link BridgeSimulator} behaves. Immutable; build one with {@link #builder()}. The bearer token
 * is never shown by {@link #toString()}. Without a token the simulator binds only a loopback address (as
 * every Bridge must, protocol section 1).
 */
public final class SimulatorConfig {
    private final String host;
    private final int port;
    private final String bearerToken;
    private final Duration heartbeatInterval;
    private final double eventsPerSecond;
    private final double slowEventsPerSecond;
    private final boolean strictSessions;
    private final Scenario scenario;
    private final int longCount;
    private final int dropAfterFrames;
    private final int retainedRuns;
    private final long retainedFrames;
    private final Duration approvalTimeout;
    private final Duration approvalTimerLag;

    private SimulatorConfig(Builder b) {
        this.host = b.host;
        this.port = b.port;
        this.bearerToken = b.bearerToken;
        this.heartbeatInterval = b.heartbeatInterval;
        this.eventsPerSecond = b.eventsPerSecond;
        this.slowEventsPerSecond = b.slowEventsPerSecond;
        this.strictSessions = b.strictSessions;
        this.scenario = b.scenario;
        this.longCount = b.longCount;
        this.dropAfterFrames = b.dropAfterFrames;
        this.retainedRuns = b.retainedRuns;
        this.retainedFrames = b.retainedFrames;
        this.approvalTimeout = b.approvalTimeout;
        this.approvalTimerLag = b.approvalTimerLag;
    }

    /** What {@link #fromCommandLine} takes. */
    public static final String USAGE = "usage: BridgeSimulator [--port N] [--host H] [--token T] [--heartbeat S] "
            + "[--rate N] [--slow-rate N] [--scenario NAME] [--long-count N] [--approval-timeout S] [--strict-sessions]";

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A configuration from command-line options: {@code --port N} (default 8700, 0 for any), {@code --host H}
     * (default 127.0.0.1; an address that is not loopback needs a token), {@code --token T}, {@code --heartbeat SECONDS} (default 15),
     * {@code --rate EVENTS_PER_SECOND} (default 0: as fast as possible), {@code --slow-rate N} (default 20),
     * {@code --scenario NAME} (force one for every run), {@code --long-count N} (default 1000),
     * {@code --approval-timeout SECONDS} (default 60, 0 for no limit), {@code --strict-sessions}.
     *
     * @throws IllegalArgumentException for an unknown option, a missing or bad value
     */
    public static SimulatorConfig fromCommandLine(String... args) {
        Builder builder = builder().port(8700);
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--strict-sessions")) {
                builder.strictSessions(true);
                continue;
            }
            if (++i >= args.length) {
                throw new IllegalArgumentException(arg + " needs a value");
            }
            String value = args[i];
            switch (arg) {
                case "--port":
                    builder.port(Integer.parseInt(value));
                    break;
                case "--host":
                    builder.host(value);
                    break;
                case "--token":
                    builder.bearerToken(value);
                    break;
                case "--heartbeat":
                    builder.heartbeatInterval(seconds(value));
                    break;
                case "--rate":
                    builder.eventsPerSecond(Double.parseDouble(value));
                    break;
                case "--slow-rate":
                    builder.slowEventsPerSecond(Double.parseDouble(value));
                    break;
                case "--scenario":
                    builder.scenario(Scenario.valueOf(value.toUpperCase(Locale.ROOT).replace('-', '_')));
                    break;
                case "--long-count":
                    builder.longCount(Integer.parseInt(value));
                    break;
                case "--approval-timeout":
                    builder.approvalTimeout(seconds(value));
                    break;
                default:
                    throw new IllegalArgumentException("unknown option " + arg + " (try --help)");
            }
        }
        return builder.build();
    }

    private static Duration seconds(String value) {
        return Duration.ofMillis((long) (Double.parseDouble(value) * 1000));
    }

    /** Everything at its default: loopback, an ephemeral port, no token, 15 s heartbeats, full speed. */
    public static SimulatorConfig defaults() {
        return builder().build();
    }

    /** The address to bind: a loopback name or address unless a bearer token is set. */
    public String host() {
        return host;
    }

    /** The port to bind; 0 for an ephemeral one ({@link BridgeSimulator#port()} tells which). */
    public int port() {
        return port;
    }

    /** The bearer token every call but {@code /health} must carry, or null for none. */
    public String bearerToken() {
        return bearerToken;
    }

    public Duration heartbeatInterval() {
        return heartbeatInterval;
    }

    /** Frames per second of every run; 0 for as fast as possible. */
    public double eventsPerSecond() {
        return eventsPerSecond;
    }

    /** Frames per second of the SLOW scenario. */
    public double slowEventsPerSecond() {
        return slowEventsPerSecond;
    }

    /** True: an unknown session id is {@code 410 SESSION_NOT_FOUND}; false: it starts a fresh session. */
    public boolean strictSessions() {
        return strictSessions;
    }

    /** The scenario of every run, or null to choose by the user message. */
    public Scenario scenario() {
        return scenario;
    }

    /** The frame count of LONG when the message names none. */
    public int longCount() {
        return longCount;
    }

    /** After how many frames the DROP scenario cuts its first connection. */
    public int dropAfterFrames() {
        return dropAfterFrames;
    }

    /** Finished runs whose event logs are kept for re-attaching (oldest dropped first). */
    public int retainedRuns() {
        return retainedRuns;
    }

    /** The most frames kept over all finished runs (oldest runs dropped first). */
    public long retainedFrames() {
        return retainedFrames;
    }

    /**
     * How long an approval waits for a decision before it expires, as Hermes' {@code approvals.timeout}
     * (default 60 s); zero for no limit (then {@code expiresAt} is null).
     */
    public Duration approvalTimeout() {
        return approvalTimeout;
    }

    /**
     * How much later than the {@code expiresAt} it announces the simulator's own approval timer fires (a
     * Bridge whose clock is behind the client's); zero by default. Lets a test see the client's expiry call
     * end the wait.
     */
    public Duration approvalTimerLag() {
        return approvalTimerLag;
    }

    @Override
    public String toString() {
        return "SimulatorConfig[host=" + host + ", port=" + port + ", bearerToken=" + (bearerToken == null ? "none" : "****")
                + ", heartbeatInterval=" + heartbeatInterval + ", eventsPerSecond=" + eventsPerSecond
                + ", slowEventsPerSecond=" + slowEventsPerSecond + ", strictSessions=" + strictSessions + ", scenario="
                + (scenario == null ? "by message" : scenario) + ", longCount=" + longCount + ", dropAfterFrames="
                + dropAfterFrames + ", retainedRuns=" + retainedRuns + ", retainedFrames=" + retainedFrames
                + ", approvalTimeout=" + approvalTimeout + ", approvalTimerLag=" + approvalTimerLag + "]";
    }

    /** Builds a {@link SimulatorConfig}. Not thread-safe. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port;
        private String bearerToken;
        private Duration heartbeatInterval = Duration.ofSeconds(15);
        private double eventsPerSecond;
        private double slowEventsPerSecond = 20;
        private boolean strictSessions;
        private Scenario scenario;
        private int longCount = 1000;
        private int dropAfterFrames = 8;
        private int retainedRuns = 64;
        private long retainedFrames = 2_000_000;
        private Duration approvalTimeout = Duration.ofSeconds(60);
        private Duration approvalTimerLag = Duration.ZERO;

        private Builder() {
        }

        public Builder host(String value) {
            this.host = Objects.requireNonNull(value, "host");
            return this;
        }

        public Builder port(int value) {
            if (value < 0 || value > 65535) {
                throw new IllegalArgumentException("port must be 0 to 65535, got " + value);
            }
            this.port = value;
            return this;
        }

        public Builder bearerToken(String value) {
            this.bearerToken = value == null || value.isBlank() ? null : value;
            return this;
        }

        public Builder heartbeatInterval(Duration value) {
            if (value == null || value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("heartbeatInterval must be positive");
            }
            this.heartbeatInterval = value;
            return this;
        }

        public Builder eventsPerSecond(double value) {
            if (value < 0 || Double.isNaN(value)) {
                throw new IllegalArgumentException("eventsPerSecond must be 0 (unlimited) or positive");
            }
            this.eventsPerSecond = value;
            return this;
        }

        public Builder slowEventsPerSecond(double value) {
            if (value <= 0 || Double.isNaN(value)) {
                throw new IllegalArgumentException("slowEventsPerSecond must be positive");
            }
            this.slowEventsPerSecond = value;
            return this;
        }

        public Builder strictSessions(boolean value) {
            this.strictSessions = value;
            return this;
        }

        /** Forces one scenario for every run; null (the default) chooses by the user message. */
        public Builder scenario(Scenario value) {
            this.scenario = value;
            return this;
        }

        public Builder longCount(int value) {
            if (value < 1) {
                throw new IllegalArgumentException("longCount must be at least 1");
            }
            this.longCount = value;
            return this;
        }

        public Builder dropAfterFrames(int value) {
            if (value < 1) {
                throw new IllegalArgumentException("dropAfterFrames must be at least 1");
            }
            this.dropAfterFrames = value;
            return this;
        }

        public Builder retainedRuns(int value) {
            if (value < 0) {
                throw new IllegalArgumentException("retainedRuns must not be negative");
            }
            this.retainedRuns = value;
            return this;
        }

        public Builder retainedFrames(long value) {
            if (value < 0) {
                throw new IllegalArgumentException("retainedFrames must not be negative");
            }
            this.retainedFrames = value;
            return this;
        }

        /** Zero for no limit. */
        public Builder approvalTimeout(Duration value) {
            if (value == null || value.isNegative()) {
                throw new IllegalArgumentException("approvalTimeout must be zero (no limit) or positive");
            }
            this.approvalTimeout = value;
            return this;
        }

        public Builder approvalTimerLag(Duration value) {
            if (value == null || value.isNegative()) {
                throw new IllegalArgumentException("approvalTimerLag must not be negative");
            }
            this.approvalTimerLag = value;
            return this;
        }

        /**
         * @throws IllegalArgumentException for a host that is not a loopback name or address
         *     ({@code localhost}, {@code 127.0.0.0/8}, {@code ::1}) without a bearer token
         */
        public SimulatorConfig build() {
            if (bearerToken == null && !Admission.isLoopbackName(host)) {
                throw new IllegalArgumentException("binding " + host + " without a bearer token: a Bridge without a"
                        + " token may listen only on a loopback address (set bearerToken, or --token)");
            }
            return new SimulatorConfig(this);
        }
    }
}
