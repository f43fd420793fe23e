package dev.parley.simulation;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One operation of a simulation, as generated from its seed. Operations name what they act on symbolically (the
 * n-th thread, run, message or subscription the simulation knows when the operation runs, modulo how many it
 * knows), so any subset of a history still runs: that is how a failing history is shrunk and replayed.
 */
sealed interface Op {
    /** The operation's number in its simulation: stable under shrinking, used to replay a subset. */
    int id();

    /** Which engine (instance) the call goes to. */
    int instance();

    record CreateThread(int id, int instance, int owner) implements Op {
    }

    /** Opens a thread by a client-chosen name (AG-UI style), which may be a deleted thread's. */
    record OpenThread(int id, int instance, int owner, int name) implements Op {
    }

    /** Sends a message; with {@code wrongOwner} the caller is not the thread's owner (NOT_FOUND expected). */
    record Send(int id, int instance, int thread, SimRuntime.Script script, boolean wrongOwner) implements Op {
    }

    /** Two messages to one thread at the same moment, from two callers. */
    record SendTwice(int id, int instance, int thread, SimRuntime.Script script) implements Op {
    }

    record Edit(int id, int instance, int message, SimRuntime.Script script) implements Op {
    }

    record Regenerate(int id, int instance, int run) implements Op {
    }

    record SwitchBranch(int id, int instance, int message) implements Op {
    }

    /** Rolls the run's thread back to the run's answer. */
    record RollBack(int id, int instance, int run) implements Op {
    }

    /** Takes the last exchange of the run's thread back. */
    record Undo(int id, int instance, int run) implements Op {
    }

    /** Continues the run's answer (a new run on its thread). */
    record ContinueAnswer(int id, int instance, int run) implements Op {
    }

    record Cancel(int id, int instance, int run) implements Op {
    }

    /** How an answer is given. */
    enum AnswerKind {
        /** The right shape, once. */
        RIGHT,
        /** The right shape; sent again at once if it could not be delivered (a person retrying). */
        RETRY_ON_FAILURE,
        /** The same answer twice at the same moment (a double click). */
        TWICE_AT_ONCE,
        /** An answer of the wrong shape (INVALID_INPUT expected, nothing changes). */
        WRONG_SHAPE,
        /** Another owner's answer (NOT_FOUND expected). */
        OTHER_OWNER
    }

    record Answer(int id, int instance, int run, AnswerKind kind) implements Op {
    }

    record Subscribe(int id, int instance, int run, boolean fromStart) implements Op {
    }

    /** Drops a subscription and subscribes again from the last seq it saw. */
    record Resubscribe(int id, int instance, int subscription) implements Op {
    }

    record DeleteThread(int id, int instance, int thread) implements Op {
    }

    record EraseOwner(int id, int instance, int owner) implements Op {
    }

    record Compact(int id, int instance) implements Op {
    }

    /** Closes the instance's engine and opens a new one on the same store (a host restart). */
    record Restart(int id, int instance) implements Op {
    }

    /** The instance dies: its store connection fails and it leaves the cluster; a later Restart revives it. */
    record Kill(int id, int instance) implements Op {
    }

    /** Virtual time passes. */
    record Advance(int id, int instance, long millis) implements Op {
    }

    /** How a file is uploaded. */
    enum UploadKind {
        /** As it is, to a thread of the caller's. */
        RIGHT,
        /** With a claimed type its content contradicts (INVALID_INPUT expected, nothing stored). */
        MISLABELLED,
        /** Larger than a file may be (TOO_LARGE expected, nothing stored). */
        TOO_LARGE,
        /** To another owner's thread (NOT_FOUND expected, nothing stored). */
        OTHER_OWNER
    }

    /** Uploads the {@code file}-th of the simulation's few files ({@link FileOps#FILES}) to a thread. */
    record Upload(int id, int instance, int thread, int file, UploadKind kind) implements Op {
    }

    /** Where the files a message sends come from. */
    enum FilesFrom {
        /** Its thread's uploads. */
        THREAD,
        /** An upload to another thread of the owner (NOT_FOUND expected, nothing stored). */
        OTHER_THREAD,
        /** Another owner's upload (NOT_FOUND expected, nothing stored). */
        OTHER_OWNER
    }

    /**
     * Sends a message with up to {@code count} of the files uploaded to its thread, or with one from elsewhere
     * too; {@code thread} names an upload (whose thread it is sent to) or, for one from elsewhere, a thread.
     */
    record SendFiles(int id, int instance, int thread, int count, SimRuntime.Script script, FilesFrom from)
            implements Op {
    }

    /** Reads an upload from an offset (the start, within, its end, past it); as another owner, NOT_FOUND. */
    record OpenFile(int id, int instance, int upload, int offset, boolean otherOwner) implements Op {
    }

    /** The operations of one step, run at the same moment by as many callers. */
    record Step(List<Op> ops) {
    }

    /** Generates a simulation's steps from its seed; the same seed and settings give the same steps. */
    static List<Step> generate(long seed, int steps, int instances, boolean cluster, int owners) {
        Random random = new Random(seed);
        List<Step> generated = new ArrayList<>();
        int id = 0;
        for (int s = 0; s < steps; s++) {
            int width = random.nextInt(10) < 6 ? 1 : 2 + random.nextInt(2);
            List<Op> ops = new ArrayList<>();
            for (int k = 0; k < width; k++) {
                ops.add(next(random, id++, instances, cluster, owners));
            }
            generated.add(new Step(ops));
        }
        return generated;
    }

    private static Op next(Random r, int id, int instances, boolean cluster, int owners) {
        int at = r.nextInt(instances);
        int pick = r.nextInt(1140);
        int any = r.nextInt(1 << 20);
        SimRuntime.Script script = SimRuntime.Script.values()[r.nextInt(SimRuntime.Script.values().length)];
        if (pick < 70) {
            return new CreateThread(id, at, r.nextInt(owners));
        } else if (pick < 110) {
            return new OpenThread(id, at, r.nextInt(owners), r.nextInt(4));
        } else if (pick < 330) {
            return new Send(id, at, any, script, r.nextInt(20) == 0);
        } else if (pick < 370) {
            return new SendTwice(id, at, any, script);
        } else if (pick < 400) {
            return new Edit(id, at, any, script);
        } else if (pick < 430) {
            return new Regenerate(id, at, any);
        } else if (pick < 450) {
            return new SwitchBranch(id, at, any);
        } else if (pick < 520) {
            return new Cancel(id, at, any);
        } else if (pick < 680) {
            return new Answer(id, at, any, AnswerKind.values()[r.nextInt(AnswerKind.values().length)]);
        } else if (pick < 760) {
            return new Subscribe(id, at, any, r.nextBoolean());
        } else if (pick < 790) {
            return new Resubscribe(id, at, any);
        } else if (pick < 815) {
            return new DeleteThread(id, at, any);
        } else if (pick < 830) {
            return new EraseOwner(id, at, r.nextInt(owners));
        } else if (pick < 845) {
            return new Compact(id, at);
        } else if (pick < 860) {
            return new Restart(id, at);
        } else if (pick < 875 && cluster) {
            return new Kill(id, at);
        } else if (pick >= 875 && pick < 890) {
            return new RollBack(id, at, any);
        } else if (pick >= 890 && pick < 900) {
            return new Undo(id, at, any);
        } else if (pick >= 900 && pick < 915) {
            return new ContinueAnswer(id, at, any);
        } else if (pick >= 1000) {
            return files(r, id, at, pick - 1000, any, script);
        } else {
            return new Advance(id, at, 20 + r.nextInt(r.nextInt(10) == 0 ? 3_000 : 400));
        }
    }

    /** An operation on attachments, {@code pick} below 140. */
    private static Op files(Random r, int id, int at, int pick, int any, SimRuntime.Script script) {
        if (pick < 60) {
            int kind = r.nextInt(10);
            return new Upload(id, at, any, r.nextInt(FileOps.FILES.size()), kind < 7 ? UploadKind.RIGHT
                    : UploadKind.values()[kind - 6]);
        } else if (pick < 110) {
            int from = r.nextInt(10);
            return new SendFiles(id, at, any, 1 + r.nextInt(3), script, from < 8 ? FilesFrom.THREAD
                    : FilesFrom.values()[from - 7]);
        } else {
            return new OpenFile(id, at, any, r.nextInt(4), r.nextInt(8) == 0);
        }
    }
}
