package dev.parley.chat.cluster;

import java.time.Instant;
import java.util.Objects;

/** Which host instance holds a run, and until when unless it renews the lease. */
public record RunLease(String runId, String instanceId, Instant until) {
    public RunLease {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(instanceId, "instanceId");
        Objects.requireNonNull(until, "until");
    }
}
