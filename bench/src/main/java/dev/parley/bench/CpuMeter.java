package dev.parley.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * CPU time used by each kind of thread (named by its name without digits) between {@link #start()} and
 * {@link #stop()}: where the cores went during one measurement, per event. Threads that end in between are
 * missed (none of the measured paths ends its threads within a run).
 */
final class CpuMeter {
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private Map<Long, Long> before = new HashMap<>();
    private Map<Long, Long> allocatedBefore = new HashMap<>();
    private final Map<String, Long> byKind = new LinkedHashMap<>();
    private long allocated;
    private long wallStart;
    private long wallNanos;
    private long[] procBefore;
    private double machineBusy = Double.NaN;

    CpuMeter start() {
        before = snapshot();
        allocatedBefore = allocations();
        procBefore = procStat();
        wallStart = System.nanoTime();
        return this;
    }

    CpuMeter stop() {
        wallNanos = System.nanoTime() - wallStart;
        long[] procAfter = procStat();
        if (procBefore != null && procAfter != null && procAfter[1] > procBefore[1]) {
            machineBusy = (double) (procAfter[0] - procBefore[0]) / (procAfter[1] - procBefore[1])
                    * Runtime.getRuntime().availableProcessors();
        }
        Map<Long, Long> after = snapshot();
        allocated = 0;
        for (Map.Entry<Long, Long> e : allocations().entrySet()) {
            allocated += Math.max(0, e.getValue() - allocatedBefore.getOrDefault(e.getKey(), 0L));
        }
        Map<Long, String> names = new HashMap<>();
        for (ThreadInfo info : threads.getThreadInfo(after.keySet().stream().mapToLong(Long::longValue).toArray())) {
            if (info != null) {
                names.put(info.getThreadId(), info.getThreadName());
            }
        }
        byKind.clear();
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            long used = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            String name = names.getOrDefault(e.getKey(), "?");
            if (used > 0) {
                byKind.merge(kind(name), used, Long::sum);
            }
        }
        return this;
    }

    private Map<Long, Long> allocations() {
        Map<Long, Long> bytes = new HashMap<>();
        if (threads instanceof com.sun.management.ThreadMXBean) {
            com.sun.management.ThreadMXBean sun = (com.sun.management.ThreadMXBean) threads;
            long[] ids = threads.getAllThreadIds();
            long[] values = sun.getThreadAllocatedBytes(ids);
            for (int i = 0; i < ids.length; i++) {
                if (values[i] > 0) {
                    bytes.put(ids[i], values[i]);
                }
            }
        }
        return bytes;
    }

    /** /proc/stat's first line: {busy jiffies, total jiffies}, or null off Linux. */
    private static long[] procStat() {
        try {
            String line = java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/stat")).get(0);
            String[] f = line.trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < f.length; i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + (f.length > 5 ? Long.parseLong(f[5]) : 0);
            return new long[] {total - idle, total};
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
    }

    private Map<Long, Long> snapshot() {
        Map<Long, Long> cpu = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            long t = threads.getThreadCpuTime(id);
            if (t > 0) {
                cpu.put(id, t);
            }
        }
        return cpu;
    }

    private static String kind(String name) {
        String k = name.replaceAll("[0-9]+", "#");
        if (k.startsWith("OkHttp ")) {
            return "OkHttp";
        }
        if (k.startsWith("http-nio-")) {
            return "tomcat-" + (k.contains("exec") ? "exec" : k.contains("Poller") ? "poller" : "other");
        }
        if (k.startsWith("bridge-sim-")) {
            return k.contains("agent") ? "simulator-agent" : "simulator-http";
        }
        return k;
    }

    /** JVM CPU microseconds per event (all threads). */
    double totalMicrosPerEvent(long events) {
        return byKind.values().stream().mapToLong(Long::longValue).sum() / 1000.0 / events;
    }

    /** Total CPU time over the wall time: how many cores were busy on average (JVM threads only). */
    double coresBusy() {
        long total = byKind.values().stream().mapToLong(Long::longValue).sum();
        return wallNanos == 0 ? 0 : (double) total / wallNanos;
    }

    /** e.g. "parley-hermes-stream-# 3.1 µs, simulator-agent 1.9 µs, … (total 7.2 µs; 1.8 cores busy)". */
    String perEvent(long events) {
        long total = byKind.values().stream().mapToLong(Long::longValue).sum();
        String parts = byKind.entrySet().stream()
                .filter(e -> e.getValue() / (double) events >= 50)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .map(e -> "`" + e.getKey() + "` " + Fmt.num(e.getValue() / 1000.0 / events) + " µs")
                .collect(Collectors.joining(", "));
        return parts + " (JVM total " + Fmt.num(total / 1000.0 / events) + " µs and " + Fmt.num((double) allocated / events)
                + " bytes allocated per event; cores busy on average: JVM "
                + Fmt.num(coresBusy()) + ", whole machine " + Fmt.num(machineBusy) + " of " + Runtime.getRuntime().availableProcessors() + ")";
    }
}
