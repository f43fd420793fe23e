package dev.parley.chat.store;

import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * {@link InMemoryChatStore}'s runs with what belongs to each: its event log (ordered by seq, each seq
 * stored once), its reserved seqs, its resume point, its lease, and whether its log was compacted. Runs are kept in
 * first-save order. Not thread-safe: the store calls it under its one lock. Lists returned are new.
 */
final class InMemoryRuns {
    private final Map<String, Run> runs = new LinkedHashMap<>();
    private final Map<String, List<RunEvent>> eventsByRun = new HashMap<>();
    private final Map<String, Long> reservedSeqs = new HashMap<>();
    private final Map<String, StoreBatch.ResumePoint> resumePoints = new HashMap<>();
    private final Map<String, Map<String, String>> startContexts = new HashMap<>();
    private final Set<String> compactedRuns = new HashSet<>();
    private final Map<String, RunLease> leases = new HashMap<>();

    /** Stores a run, replacing its previous state (its place in the order stays). */
    void save(Run run) {
        runs.put(run.id(), run);
    }

    @Nullable Run find(String runId) {
        return runs.get(runId);
    }

    boolean exists(String runId) {
        return runs.containsKey(runId);
    }

    /** Every run in first-save order: a view, valid until the next change. */
    Collection<Run> all() {
        return runs.values();
    }

    /**
     * Removes a thread's runs with their logs, reservations, resume points, leases and compaction marks; the
     * ids removed.
     */
    List<String> deleteOfThread(String threadId) {
        List<String> runIds = new ArrayList<>();
        runs.values().removeIf(run -> {
            if (run.threadId().equals(threadId)) {
                runIds.add(run.id());
                return true;
            }
            return false;
        });
        for (String runId : runIds) {
            eventsByRun.remove(runId);
            reservedSeqs.remove(runId);
            resumePoints.remove(runId);
            startContexts.remove(runId);
            compactedRuns.remove(runId);
            leases.remove(runId);
        }
        return runIds;
    }

    List<Run> findByStatus(Set<RunStatus> statuses) {
        List<Run> result = new ArrayList<>();
        for (Run run : runs.values()) {
            if (statuses.contains(run.status())) {
                result.add(run);
            }
        }
        return result;
    }

    List<Run> findOfThread(String threadId, Set<RunStatus> statuses) {
        List<Run> result = new ArrayList<>();
        for (Run run : runs.values()) {
            if (run.threadId().equals(threadId) && statuses.contains(run.status())) {
                result.add(run);
            }
        }
        return result;
    }

    /**
     * Adds an event at its seq's place in its run's log; an event whose seq is stored is ignored, and so is
     * an event of a compacted log (see {@link ChatStore#compactRunEvents}).
     */
    void append(RunEvent event) {
        if (compactedRuns.contains(event.runId())) {
            return;
        }
        List<RunEvent> events = eventsByRun.computeIfAbsent(event.runId(), k -> new ArrayList<>());
        int at = indexAfter(events, event.seq() - 1);
        if (at == events.size() || events.get(at).seq() != event.seq()) {
            events.add(at, event);
        }
    }

    /** At most {@code limit} events of the run with seq above {@code afterSeq}, in seq order. */
    List<RunEvent> readEvents(String runId, long afterSeq, int limit) {
        List<RunEvent> events = eventsByRun.getOrDefault(runId, List.of());
        int from = indexAfter(events, afterSeq);
        int to = (int) Math.min(events.size(), (long) from + limit);
        return new ArrayList<>(events.subList(from, to));
    }

    /** The index of the first event with seq above {@code seq}. */
    private static int indexAfter(List<RunEvent> events, long seq) {
        int low = 0;
        int high = events.size();
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (events.get(mid).seq() <= seq) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    /** The greatest stored seq of the run, 0 if it has no events. */
    long lastSeq(String runId) {
        List<RunEvent> events = eventsByRun.get(runId);
        return events == null || events.isEmpty() ? 0 : events.get(events.size() - 1).seq();
    }

    /** Raises the run's reserved seq to {@code upTo}; a lower one changes nothing. */
    void reserveSeq(String runId, long upTo) {
        reservedSeqs.merge(runId, upTo, Math::max);
    }

    /** The run's reserved seq, 0 if none was reserved. */
    long reservedSeq(String runId) {
        return reservedSeqs.getOrDefault(runId, 0L);
    }

    /** Replaces the run's resume point. */
    void saveResumePoint(StoreBatch.ResumePoint point) {
        resumePoints.put(point.runId(), point);
    }

    StoreBatch.@Nullable ResumePoint resumePoint(String runId) {
        return resumePoints.get(runId);
    }

    /** Keeps a stored run's start context (see {@link ChatStore#saveStartContext}). */
    void saveStartContext(String runId, Map<String, String> headers) {
        if (runs.containsKey(runId)) {
            startContexts.put(runId, Map.copyOf(headers));
        }
    }

    Map<String, String> startContext(String runId) {
        return startContexts.getOrDefault(runId, Map.of());
    }

    /** See {@link ChatStore#findRunsToCompact}: ended runs not yet compacted, oldest end first. */
    List<Run> findToCompact(Instant endedBefore, int limit) {
        return runs.values().stream()
                .filter(run -> run.status().isTerminal() && run.finishedAt() != null
                        && run.finishedAt().isBefore(endedBefore) && !compactedRuns.contains(run.id()))
                .sorted(Comparator.comparing(Run::finishedAt))
                .limit(limit)
                .collect(Collectors.toList());
    }

    /** Replaces a stored run's log with {@code kept} (sorted by seq) and marks it compacted; else nothing. */
    void compactEvents(String runId, List<RunEvent> kept) {
        if (!runs.containsKey(runId)) {
            return;
        }
        List<RunEvent> events = new ArrayList<>(kept);
        events.sort(Comparator.comparingLong(RunEvent::seq));
        eventsByRun.put(runId, events);
        compactedRuns.add(runId);
    }

    @Nullable RunLease findLease(String runId) {
        return leases.get(runId);
    }

    /** Stores a lease of a stored run; a lease of a missing run is ignored. */
    void saveLease(RunLease lease) {
        if (runs.containsKey(lease.runId())) {
            leases.put(lease.runId(), lease);
        }
    }

    /** See {@link ChatStore#leaseRuns}: leases the stored runs no other instance holds; the ids leased. */
    Set<String> lease(String instanceId, Collection<String> runIds, Instant until) {
        Set<String> held = new HashSet<>();
        for (String runId : runIds) {
            RunLease lease = leases.get(runId);
            if (runs.containsKey(runId) && (lease == null || lease.instanceId().equals(instanceId))) {
                leases.put(runId, new RunLease(runId, instanceId, until));
                held.add(runId);
            }
        }
        return held;
    }

    /** See {@link ChatStore#takeOverRun}: leases an unfinished run whose lease is missing or expired. */
    boolean takeOver(String runId, String instanceId, Instant now, Instant until) {
        RunLease lease = leases.get(runId);
        Run run = runs.get(runId);
        if (run == null || run.status().isTerminal() || (lease != null && !lease.until().isBefore(now))) {
            return false;
        }
        leases.put(runId, new RunLease(runId, instanceId, until));
        return true;
    }

    /** Unfinished runs whose lease is missing or expired at {@code now}, in first-save order. */
    List<Run> findWithExpiredLease(Instant now) {
        List<Run> expired = new ArrayList<>();
        for (Run run : runs.values()) {
            RunLease lease = leases.get(run.id());
            if (!run.status().isTerminal() && (lease == null || lease.until().isBefore(now))) {
                expired.add(run);
            }
        }
        return expired;
    }
}
