package dev.parley.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The garbage collections between its creation and {@link #summary()}: count, total and longest duration
 * per collector (from the JVM's GC notifications; for G1's young and mixed collections the duration is the
 * stop-the-world pause).
 */
final class GcMeter implements NotificationListener {
    private final Map<String, long[]> byCollector = new TreeMap<>();
    /** Each collection as {start, end} in epoch microseconds (millisecond resolution). */
    private final List<long[]> pauses = new ArrayList<>();
    private final long jvmStartMillis = ManagementFactory.getRuntimeMXBean().getStartTime();
    private final List<NotificationEmitter> emitters = new ArrayList<>();

    GcMeter() {
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter) {
                NotificationEmitter emitter = (NotificationEmitter) gc;
                emitter.addNotificationListener(this, null, null);
                emitters.add(emitter);
            }
        }
    }

    @Override
    public void handleNotification(Notification notification, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
        long millis = info.getGcInfo().getDuration();
        long startMicros = (jvmStartMillis + info.getGcInfo().getStartTime()) * 1000;
        synchronized (byCollector) {
            pauses.add(new long[] {startMicros, startMicros + Math.max(1, millis) * 1000});
            long[] s = byCollector.computeIfAbsent(info.getGcName() + " (" + info.getGcAction() + ")", k -> new long[3]);
            s[0]++;
            s[1] += millis;
            s[2] = Math.max(s[2], millis);
        }
    }

    /**
     * The share of these intervals ({produced, received} in epoch microseconds) that overlap a collection
     * (widened by a millisecond each side, the notifications' resolution).
     */
    double shareOverlapping(java.util.Collection<long[]> intervals) {
        List<long[]> copy;
        synchronized (byCollector) {
            copy = new ArrayList<>(pauses);
        }
        if (intervals.isEmpty()) {
            return Double.NaN;
        }
        long hit = 0;
        for (long[] i : intervals) {
            for (long[] p : copy) {
                if (i[0] <= p[1] + 1000 && i[1] >= p[0] - 1000) {
                    hit++;
                    break;
                }
            }
        }
        return (double) hit / intervals.size();
    }

    /** Stops listening and describes what was seen, e.g. "G1 Young Generation: 6 × , 143 ms in all, longest 31 ms". */
    String summary() {
        for (NotificationEmitter emitter : emitters) {
            try {
                emitter.removeNotificationListener(this);
            } catch (javax.management.ListenerNotFoundException e) {
                // already removed
            }
        }
        synchronized (byCollector) {
            if (byCollector.isEmpty()) {
                return "no collection";
            }
            StringBuilder b = new StringBuilder();
            for (Map.Entry<String, long[]> e : byCollector.entrySet()) {
                if (b.length() > 0) {
                    b.append("; ");
                }
                b.append(e.getKey()).append(": ").append(e.getValue()[0]).append(" collections, ").append(e.getValue()[1])
                        .append(" ms in all, longest ").append(e.getValue()[2]).append(" ms");
            }
            return b.toString();
        }
    }
}
