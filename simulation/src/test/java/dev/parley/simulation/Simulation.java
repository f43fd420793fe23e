package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * One simulation: the steps its seed generates, run against a fresh world, with the promises checked after
 * every step and at the end. A step's operations run at the same moment on as many caller threads while
 * virtual time moves on; then the world is wound down (faults off, every run stopped, time moved on until
 * nothing is active) and every promise is checked, including that each thread takes a next message.
 */
final class Simulation {
    /** Steps whose operations have not returned after this long have hung (the API returns promptly). */
    private static final long STEP_LIMIT_MILLIS = 60_000;
    /** How long the wind-down may take, real time, before a run that has not ended is a broken promise. */
    private static final long WIND_DOWN_MILLIS = 30_000;

    /**
     * What to simulate.
     *
     * @param faultRate the base probability of a fault at each point (0: none)
     */
    record Settings(long seed, int steps, Stores store, int instances, double faultRate) {
        /** The form a replay takes ({@code -Dparley.sim.replay=…}), with the operations to keep. */
        String describe(@Nullable Set<Integer> keep) {
            return "seed=" + seed + ",steps=" + steps + ",store=" + store + ",instances=" + instances + ",faults="
                    + faultRate + (keep == null ? "" : ",ops=" + keep.stream().sorted().map(String::valueOf)
                            .collect(Collectors.joining("+")));
        }

        static Settings parse(String text) {
            long seed = 0;
            int steps = 0;
            Stores store = Stores.MEMORY;
            int instances = 1;
            double faults = 0.02;
            for (String part : text.split(",")) {
                String[] pair = part.split("=", 2);
                switch (pair[0]) {
                    case "seed" -> seed = Long.parseLong(pair[1]);
                    case "steps" -> steps = Integer.parseInt(pair[1]);
                    case "store" -> store = Stores.valueOf(pair[1]);
                    case "instances" -> instances = Integer.parseInt(pair[1]);
                    case "faults" -> faults = Double.parseDouble(pair[1]);
                    case "ops" -> {
                    }
                    default -> throw new IllegalArgumentException("unknown replay setting " + pair[0]);
                }
            }
            return new Settings(seed, steps, store, instances, faults);
        }

        static @Nullable Set<Integer> parseOps(String text) {
            for (String part : text.split(",")) {
                if (part.startsWith("ops=")) {
                    return part.length() == 4 ? Set.of() : java.util.Arrays.stream(part.substring(4).split("\\+"))
                            .map(Integer::valueOf).collect(Collectors.toSet());
                }
            }
            return null;
        }
    }

    /** How a simulation went: the promises it broke (empty if none), and what it did. */
    record Outcome(Settings settings, List<String> violations, List<Op> ran, long checks, long faults,
            int runs, long millis) {
        boolean failed() {
            return !violations.isEmpty();
        }

        /** The invariant the first broken promise names. */
        String invariant() {
            return violations.isEmpty() ? "" : violations.get(0).split(":", 2)[0];
        }
    }

    private Simulation() {
    }

    /**
     * Runs the simulation {@code settings} describe, keeping only the operations whose ids are in {@code keep}
     * (all when null).
     */
    static Outcome run(Settings settings, @Nullable Set<Integer> keep, Path work) {
        long started = System.nanoTime();
        List<Op.Step> steps = new ArrayList<>();
        for (Op.Step step : Op.generate(settings.seed(), settings.steps(), settings.instances(),
                settings.instances() > 1, World.OWNERS.size())) {
            List<Op> kept = step.ops().stream().filter(op -> keep == null || keep.contains(op.id())).toList();
            if (!kept.isEmpty()) {
                steps.add(new Op.Step(kept));
            }
        }
        List<Op> ran = new ArrayList<>();
        try (World world = new World(settings, settings.store().create(work))) {
            Operations operations = new Operations(world);
            Checks checks = new Checks(world);
            for (Op.Step step : steps) {
                runStep(world, operations, step);
                ran.addAll(step.ops());
                world.time.advance(10);
                checks.afterStep();
                if (!world.violations.isEmpty()) {
                    break;
                }
            }
            int runs = world.runs.size();
            if (world.violations.isEmpty()) {
                windDown(world);
                checks.atTheEnd();
            }
            if (world.violations.isEmpty()) {
                everyThreadTakesTheNextMessage(world);
            }
            return new Outcome(settings, List.copyOf(world.violations), ran, checks.count(), world.faults.injected(),
                    runs, (System.nanoTime() - started) / 1_000_000);
        }
    }

    /** Runs a step's operations at once, each on its own caller, moving virtual time on while they work. */
    private static void runStep(World world, Operations operations, Op.Step step) {
        CountDownLatch done = new CountDownLatch(step.ops().size());
        for (Op op : step.ops()) {
            Thread caller = new Thread(() -> {
                try {
                    operations.run(op);
                } finally {
                    done.countDown();
                }
            }, "sim-caller-" + op.id());
            caller.setDaemon(true);
            caller.start();
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STEP_LIMIT_MILLIS);
        try {
            while (!done.await(1, TimeUnit.MILLISECONDS)) {
                world.time.advance(5);
                if (System.nanoTime() > deadline) {
                    world.violated("every call returns promptly", "step " + step.ops() + " has not returned after "
                            + STEP_LIMIT_MILLIS / 1000 + " s");
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Faults off, dead instances back, every live run stopped; then virtual time moves on until nothing is
     * active and every subscriber is done. A run still active after that broke "every started run ends".
     */
    private static void windDown(World world) {
        world.faults.switchOff();
        for (int i = 0; i < world.instances(); i++) {
            if (world.isDead(i)) {
                world.start(i);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WIND_DOWN_MILLIS);
        Set<RunStatus> live = EnumSet.of(RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.WAITING_FOR_INPUT);
        while (true) {
            List<Run> active = world.store.findRuns(live);
            boolean subscribersDone = world.subscriptions.stream().allMatch(s -> s.subscriber().done());
            if (active.isEmpty() && subscribersDone) {
                return;
            }
            for (Run run : active) {
                try {
                    world.engine(0).cancel(run.ownerId(), run.id());
                } catch (ChatException ignored) {
                    // stopping what is left; the checks judge the result
                }
            }
            world.time.advance(200);
            sleep(20);
            if (System.nanoTime() > deadline) {
                if (!active.isEmpty()) {
                    world.violated("every started run ends", "still active after the wind-down: " + active.stream()
                            .map(r -> r.id() + " " + r.status() + " lease " + world.store.findLease(r.id()).orElse(null)
                                    + " (instances now " + world.instanceIds() + ", time " + world.time.clock().instant()
                                    + "), " + world.store.readEvents(r.id(), 0, 1_000_000).size() + " events stored")
                            .toList());
                } else {
                    world.subscriptions.stream().filter(s -> !s.subscriber().done()).findFirst().ifPresent(s ->
                            world.violated("every subscriber sees each event once, in order", "a subscriber of ended run "
                                    + s.runId() + " after " + s.after() + " never completed (got "
                                    + s.subscriber().received.size() + " events)"));
                }
                return;
            }
        }
    }

    /** No thread is wedged: each one still there takes a new message, and its run ends. */
    private static void everyThreadTakesTheNextMessage(World world) {
        List<String> seen = new ArrayList<>();
        for (World.ThreadRef ref : world.threads) {
            if (seen.contains(ref.id()) || seen.size() >= 12) {
                continue;
            }
            seen.add(ref.id());
            ChatThread thread = world.store.findThread(ref.id()).orElse(null);
            if (thread == null) {
                continue;
            }
            for (int i = 0; i < world.instances(); i++) {
                RunTicket ticket;
                try {
                    ticket = world.engine(i).startRun(thread.ownerId(), thread.id(),
                            World.message(SimRuntime.Script.STREAM));
                } catch (ChatException e) {
                    world.violated("every thread takes the next message", "thread " + thread.id() + " on instance "
                            + i + ": " + e.code() + " " + e.getMessage());
                    return;
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!world.store.findRun(ticket.runId()).map(r -> r.status().isTerminal()).orElse(false)) {
                    world.time.advance(50);
                    sleep(5);
                    if (System.nanoTime() > deadline) {
                        world.violated("every thread takes the next message", "thread " + thread.id()
                                + ": its next run " + ticket.runId() + " did not end");
                        return;
                    }
                }
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
