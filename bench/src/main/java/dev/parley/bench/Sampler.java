package dev.parley.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A poor man's sampling profiler (like sampling {@code jcmd Thread.print}): every few milliseconds it
 * takes every thread's stack and counts, for the threads that are running on a CPU (RUNNABLE and not
 * parked in a socket or epoll wait), which thread kind they are and which frame is on top. On by
 * {@code --profile}; its output goes to the notes.
 */
final class Sampler implements AutoCloseable {
    /** Native methods that block (a thread inside them is RUNNABLE to the JVM, but not on a CPU). */
    private static final Set<String> IO_WAITS = Set.of("read0", "readv0", "poll", "wait", "epollWait", "accept0",
            "accept", "socketRead0", "socketAccept", "poll0", "park", "sleep", "sleep0", "wait0", "readBytes",
            "waitForReferencePendingList", "waitForProcessExit0");

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Map<String, Integer> byKind = new HashMap<>();
    private final Map<String, Integer> byTop = new HashMap<>();
    private final Map<String, Integer> byParley = new HashMap<>();
    private final Map<String, Integer> ioByKind = new HashMap<>();
    private final Thread thread;
    private volatile boolean running = true;
    private int samples;
    private int cpuSamples;

    Sampler(long periodMillis) {
        thread = new Thread(() -> loop(periodMillis), "bench-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop(long period) {
        long self = Thread.currentThread().getId();
        while (running) {
            ThreadInfo[] infos = threads.dumpAllThreads(false, false, 48);
            synchronized (this) {
                samples++;
                for (ThreadInfo info : infos) {
                    if (info == null || info.getThreadId() == self || info.getThreadState() != Thread.State.RUNNABLE) {
                        continue;
                    }
                    StackTraceElement[] stack = info.getStackTrace();
                    if (stack.length == 0) {
                        continue;
                    }
                    String kind = kind(info.getThreadName());
                    if (IO_WAITS.contains(stack[0].getMethodName()) && stack[0].isNativeMethod()) {
                        ioByKind.merge(kind, 1, Integer::sum);
                        continue;
                    }
                    cpuSamples++;
                    byKind.merge(kind, 1, Integer::sum);
                    byTop.merge(frame(stack[0]), 1, Integer::sum);
                    for (StackTraceElement e : stack) {
                        if (e.getClassName().startsWith("dev.parley.")) {
                            byParley.merge(frame(e), 1, Integer::sum);
                            break;
                        }
                    }
                }
            }
            try {
                Thread.sleep(period);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static String kind(String name) {
        String k = name.replaceAll("[0-9]+", "#");
        if (k.startsWith("OkHttp ")) {
            return "OkHttp";
        }
        return k;
    }

    private static String frame(StackTraceElement e) {
        String cls = e.getClassName();
        int dot = cls.lastIndexOf('.');
        return (dot < 0 ? cls : cls.substring(dot + 1)) + "." + e.getMethodName();
    }

    /** The profile as one line per list: thread kinds on CPU, top frames, first Parley frames. */
    synchronized String summary(String label, int top) {
        return "profile " + label + " (" + samples + " samples, " + cpuSamples + " on-CPU thread samples): on CPU by thread: "
                + topOf(byKind, top) + "; top frames: " + topOf(byTop, top) + "; first Parley frame: " + topOf(byParley, top)
                + "; blocked in native reads/polls by thread: " + topOf(ioByKind, 4);
    }

    private String topOf(Map<String, Integer> counts, int top) {
        int total = counts.values().stream().mapToInt(Integer::intValue).sum();
        if (total == 0) {
            return "(none)";
        }
        List<Map.Entry<String, Integer>> sorted = counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
                .limit(top)
                .collect(Collectors.toList());
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Integer> e : sorted) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append('`').append(e.getKey()).append("` ").append(Math.round(100.0 * e.getValue() / total)).append('%');
        }
        return b.toString();
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
