package dev.parley.chat.testing;

import dev.parley.chat.cluster.ControlMessage;
import dev.parley.chat.cluster.RunCoordinator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A hub of {@link RunCoordinator}s for engines of several "instances" in one test JVM: what one sends,
 * every connected one receives, on the hub's own thread (as a real coordinator's listener thread would).
 * An instance can be cut off (it then misses messages) and reconnected (it is told to resync).
 */
public final class InProcessCoordinators implements AutoCloseable {
    private final Map<String, Node> nodes = new ConcurrentHashMap<>();
    private final ExecutorService delivery = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "coordinator-hub");
        thread.setDaemon(true);
        return thread;
    });

    /** A coordinator for a new instance. */
    public RunCoordinator join(String instanceId) {
        Node node = new Node(instanceId);
        nodes.put(instanceId, node);
        return node;
    }

    /** The instance stops receiving (a dropped listener connection). */
    public void disconnect(String instanceId) {
        nodes.get(instanceId).connected = false;
    }

    /** The instance receives again and is told that it may have missed notices. */
    public void reconnect(String instanceId) {
        Node node = nodes.get(instanceId);
        node.connected = true;
        delivery.execute(() -> {
            RunCoordinator.Listener listener = node.listener;
            if (listener != null) {
                listener.onResync();
            }
        });
    }

    private void broadcast(java.util.function.Consumer<RunCoordinator.Listener> message) {
        delivery.execute(() -> {
            for (Node node : nodes.values()) {
                RunCoordinator.Listener listener = node.listener;
                if (node.connected && !node.closed && listener != null) {
                    try {
                        message.accept(listener);
                    } catch (RuntimeException e) {
                        // one instance's listener failing must not keep the message from the others
                        System.err.println("coordinator hub: the listener of " + node.id + " threw " + e);
                    }
                }
            }
        });
    }

    @Override
    public void close() {
        delivery.shutdownNow();
    }

    private final class Node implements RunCoordinator {
        final String id;
        volatile RunCoordinator.Listener listener;
        volatile boolean connected = true;
        volatile boolean closed;

        Node(String id) {
            this.id = id;
        }

        @Override
        public String instanceId() {
            return id;
        }

        @Override
        public void start(Listener value) {
            listener = value;
        }

        @Override
        public void progressed(Map<String, Long> lastSeqByRun) {
            if (connected && !closed) {
                Map<String, Long> copy = Map.copyOf(lastSeqByRun);
                broadcast(l -> copy.forEach(l::onProgress));
            }
        }

        @Override
        public void send(ControlMessage message) {
            if (connected && !closed) {
                broadcast(l -> l.onControl(message));
            }
        }

        @Override
        public boolean clustered() {
            return true;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** The ids of the instances that joined. */
    public Set<String> instances() {
        return nodes.keySet();
    }
}
