package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Runs one operation against a world, as a caller of the engine's public API would, and checks what the API
 * promises about that call itself: another owner's ids are NOT_FOUND, a wrong-shaped answer is refused, an
 * answer reported ACCEPTED reached the runtime, and only {@link ChatException}s are thrown. What an operation
 * created is recorded in the world for later operations and the checks.
 */
final class Operations {
    private final World world;
    private final FileOps files;

    Operations(World world) {
        this.world = world;
        this.files = new FileOps(world);
    }

    void run(Op op) {
        try {
            perform(op);
        } catch (ChatException expected) {
            // a refusal the API allows (busy thread, store failure, unknown id…): the checks judge the state
        } catch (RuntimeException | Error e) {
            world.violated("only ChatExceptions", "op " + op.id() + " " + op + " threw " + e);
        }
    }

    private void perform(Op op) {
        ChatEngine engine = world.engine(op.instance());
        if (op instanceof Op.CreateThread create) {
            world.threadCreated(engine.createThread(World.OWNERS.get(create.owner()),
                    dev.parley.chat.engine.NewThread.empty()));
        } else if (op instanceof Op.OpenThread open) {
            ChatThread thread = engine.openThread(World.OWNERS.get(open.owner()), "shared-" + open.name());
            if (world.threads.stream().noneMatch(t -> t.id().equals(thread.id())
                    && t.createdAt().equals(thread.createdAt()))) {
                world.threadCreated(thread);
            }
        } else if (op instanceof Op.Send send) {
            send(engine, send);
        } else if (op instanceof Op.SendTwice twice) {
            sendTwice(engine, twice);
        } else if (op instanceof Op.Edit edit) {
            edit(engine, edit);
        } else if (op instanceof Op.Regenerate regenerate) {
            World.RunRef run = world.run(regenerate.run());
            if (run != null) {
                world.runStarted(engine.regenerate(run.owner(), run.assistantMessageId()), run.owner(), false);
            }
        } else if (op instanceof Op.SwitchBranch switchBranch) {
            World.RunRef run = world.run(switchBranch.message());
            if (run != null) {
                engine.switchBranch(run.owner(), run.userMessageId() != null ? run.userMessageId()
                        : run.assistantMessageId());
            }
        } else if (op instanceof Op.RollBack rollBack) {
            World.RunRef run = world.run(rollBack.run());
            if (run != null) {
                expectNotFound(op, () -> engine.rollBack(world.otherOwner(run.owner()), run.assistantMessageId()));
                world.movedBackTo.add(run.threadId() + "/" + run.assistantMessageId());
                engine.rollBack(run.owner(), run.assistantMessageId());
            }
        } else if (op instanceof Op.Undo undo) {
            World.RunRef run = world.run(undo.run());
            if (run != null) {
                String stranger = world.otherOwner(run.owner());
                // a named thread's id may have been taken by the other owner after an erasure: then it is theirs
                if (!theirsNow(run.threadId(), stranger)) {
                    expectNotFound(op, () -> engine.undo(stranger, run.threadId()));
                }
                undo(engine, run);
            }
        } else if (op instanceof Op.ContinueAnswer going) {
            World.RunRef run = world.run(going.run());
            if (run != null) {
                expectNotFound(op, () -> engine.continueAnswer(world.otherOwner(run.owner()), run.assistantMessageId()));
                world.runStarted(engine.continueAnswer(run.owner(), run.assistantMessageId()), run.owner(), false);
            }
        } else if (op instanceof Op.Cancel cancel) {
            World.RunRef run = world.run(cancel.run());
            if (run != null) {
                expectNotFound(op, () -> engine.cancel(world.otherOwner(run.owner()), run.runId()));
                engine.cancel(run.owner(), run.runId());
            }
        } else if (op instanceof Op.Answer answer) {
            answer(engine, answer);
        } else if (op instanceof Op.Subscribe subscribe) {
            World.RunRef run = world.run(subscribe.run());
            if (run != null) {
                long after = subscribe.fromStart() ? 0 : engine.state(run.owner(), run.runId()).lastSeq();
                subscribe(engine, run.runId(), run.owner(), after);
            }
        } else if (op instanceof Op.Resubscribe again) {
            World.Subscription earlier = world.subscription(again.subscription());
            if (earlier != null && !earlier.subscriber().done()) {
                earlier.subscriber().drop();
                subscribe(engine, earlier.runId(), earlier.owner(), earlier.subscriber().lastSeq(earlier.after()));
            }
        } else if (op instanceof Op.DeleteThread delete) {
            World.ThreadRef thread = world.current(world.thread(delete.thread()));
            if (thread != null) {
                expectNotFound(op, () -> {
                    engine.deleteThread(world.otherOwner(thread.owner()), thread.id());
                    return null;
                });
                world.deleting(() -> engine.deleteThread(thread.owner(), thread.id()));
                world.deleted.add(thread);
            }
        } else if (op instanceof Op.EraseOwner erase) {
            String owner = World.OWNERS.get(erase.owner());
            List<World.ThreadRef> before = world.threads.stream().filter(t -> t.owner().equals(owner)).toList();
            FileOps.BeforeErasure kept = files.beforeErasure(owner);
            world.deleting(() -> engine.eraseOwner(owner));
            world.deleted.addAll(before);
            files.erased(erase, kept);
        } else if (op instanceof Op.Compact) {
            engine.compactEventLogs(Duration.ofMillis(1));
        } else if (op instanceof Op.Restart restart) {
            world.restart(restart.instance() % world.instances());
        } else if (op instanceof Op.Kill kill) {
            world.kill(kill.instance() % world.instances());
        } else if (op instanceof Op.Advance advance) {
            world.time.advance(advance.millis());
        } else if (op instanceof Op.Upload upload) {
            files.upload(engine, upload);
        } else if (op instanceof Op.SendFiles send) {
            files.sendFiles(engine, send);
        } else if (op instanceof Op.OpenFile open) {
            files.openFile(engine, open);
        }
    }

    private void send(ChatEngine engine, Op.Send send) {
        World.ThreadRef thread = world.current(world.thread(send.thread()));
        if (thread == null) {
            return;
        }
        if (send.wrongOwner()) {
            expectNotFound(send, () -> engine.startRun(world.otherOwner(thread.owner()), thread.id(),
                    World.message(send.script())));
            return;
        }
        world.runStarted(engine.startRun(thread.owner(), thread.id(), World.message(send.script())), thread.owner(),
                true);
    }

    private void sendTwice(ChatEngine engine, Op.SendTwice twice) {
        World.ThreadRef thread = world.current(world.thread(twice.thread()));
        if (thread == null) {
            return;
        }
        together(2, i -> {
            world.runStarted(engine.startRun(thread.owner(), thread.id(), World.message(twice.script())),
                    thread.owner(), true);
            return null;
        }, twice);
    }

    private void edit(ChatEngine engine, Op.Edit edit) {
        List<World.RunRef> withQuestions = world.runs.stream().filter(r -> r.userMessageId() != null).toList();
        if (withQuestions.isEmpty()) {
            return;
        }
        World.RunRef run = withQuestions.get(Math.floorMod(edit.message(), withQuestions.size()));
        world.runStarted(engine.editMessage(run.owner(), run.userMessageId(), World.message(edit.script())),
                run.owner(), false);
    }

    private void answer(ChatEngine engine, Op.Answer answer) {
        World.RunRef run = world.run(answer.run());
        if (run == null) {
            return;
        }
        RunState state = engine.state(run.owner(), run.runId());
        if (state.pendingInputs().isEmpty()) {
            return;
        }
        PendingInput input = state.pendingInputs().get(0);
        switch (answer.kind()) {
            case OTHER_OWNER:
                expectNotFound(answer, () -> engine.answer(world.otherOwner(run.owner()), run.runId(),
                        input.inputId(), rightAnswer(input)));
                break;
            case WRONG_SHAPE:
                try {
                    engine.answer(run.owner(), run.runId(), input.inputId(), wrongAnswer(input));
                    world.violated("bad input is refused", "op " + answer.id() + ": a wrong-shaped answer to "
                            + input.kind() + " " + input.inputId() + " of run " + run.runId() + " was taken");
                } catch (ChatException e) {
                    if (world.store.findInput(run.runId(), input.inputId()).map(p -> p.answer() != null
                            && p.answer().equals(wrongAnswer(input))).orElse(false)) {
                        world.violated("bad input changes nothing", "op " + answer.id()
                                + ": a refused answer was stored for " + input.inputId());
                    }
                }
                break;
            case RIGHT:
                answerChecked(engine, answer, run, input);
                break;
            case RETRY_ON_FAILURE:
                try {
                    answerChecked(engine, answer, run, input);
                } catch (ChatException e) {
                    if (e.code() != ErrorCode.RUNTIME_UNAVAILABLE) {
                        throw e;
                    }
                    answerChecked(engine, answer, run, input);
                }
                break;
            case TWICE_AT_ONCE:
                together(2, i -> {
                    answerChecked(engine, answer, run, input);
                    return null;
                }, answer);
                break;
            default:
                throw new IllegalStateException("unknown answer kind " + answer.kind());
        }
    }

    /**
     * Answers, and checks that an answer to the runtime's own question that is reported taken reached it:
     * ACCEPTED always; REPLAYED with one instance unless the run has ended (the engine promises a replayed
     * answer reached the runtime only while the run is held, and it then delivers one it finds undelivered).
     */
    private void answerChecked(ChatEngine engine, Op.Answer op, World.RunRef run, PendingInput input) {
        AnswerResult result = engine.answer(run.owner(), run.runId(), input.inputId(), rightAnswer(input));
        boolean runtimeAsked = input.inputId().equals("ask-1") || input.inputId().equals("cmd-1");
        if (!runtimeAsked || result == AnswerResult.REPLAYED && world.instances() > 1) {
            return;
        }
        AtomicInteger delivered = world.runtime.deliveries().get(run.runId() + "/" + input.inputId());
        if (delivered != null && delivered.get() > 0) {
            return;
        }
        if (result == AnswerResult.REPLAYED && endsSoon(run.runId())) {
            return;
        }
        world.violated("an answer reported taken reached the runtime", "op " + op.id() + ": " + result
                + " for " + input.inputId() + " of run " + run.runId() + ", but the runtime never got it");
    }

    /** Whether the stored run has ended, or ends within a moment (its end may be on its way to the store). */
    private boolean endsSoon(String runId) {
        long giveUp = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(2);
        while (true) {
            if (world.store.findRun(runId).map(r -> r.status().isTerminal()).orElse(true)) {
                return true;
            }
            if (System.nanoTime() > giveUp) {
                return false;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    private static InputAnswer rightAnswer(PendingInput input) {
        return switch (input.kind()) {
            case CLARIFY -> new ClarifyAnswer(List.of("Paris"));
            case APPROVAL -> ApprovalAnswer.of(input.inputId().hashCode() % 2 == 0 ? ApprovalDecision.ALLOW_ONCE
                    : ApprovalDecision.DENY);
            case CLIENT_TOOL -> new ClientToolAnswer("2026-12-24", false);
        };
    }

    private static InputAnswer wrongAnswer(PendingInput input) {
        return input.kind() == dev.parley.chat.input.InputKind.APPROVAL ? new ClarifyAnswer(List.of("Paris"))
                : ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE);
    }

    private void subscribe(ChatEngine engine, String runId, String owner, long after) {
        Subscriber subscriber = new Subscriber();
        engine.subscribe(owner, runId, after).subscribe(subscriber);
        world.subscriptions.add(new World.Subscription(runId, owner, after, subscriber));
    }

    /** Another owner's call: must be NOT_FOUND (their data is invisible). */
    /**
     * Undoes the thread's last exchange, first noting the answer it will go back to (the one before the branch's
     * last user message), so that a message sent after it may share that parent with the exchange taken back.
     */
    private void undo(ChatEngine engine, World.RunRef run) {
        List<dev.parley.chat.model.Message> branch = engine.getThread(run.owner(), run.threadId()).messages();
        for (int i = branch.size() - 1; i >= 0; i--) {
            if (branch.get(i) instanceof dev.parley.chat.model.UserMessage user) {
                if (user.parentMessageId() != null) {
                    world.movedBackTo.add(run.threadId() + "/" + user.parentMessageId());
                }
                break;
            }
        }
        engine.undo(run.owner(), run.threadId());
    }

    private boolean theirsNow(String threadId, String owner) {
        try {
            return world.store.findThread(threadId).map(t -> t.ownerId().equals(owner)).orElse(false);
        } catch (ChatException unreadable) {
            return true;
        }
    }

    private void expectNotFound(Op op, Supplier<?> call) {
        try {
            call.get();
            world.violated("another owner's ids are NOT_FOUND", "op " + op.id() + " " + op + " succeeded for another owner");
        } catch (ChatException e) {
            if (e.code() != ErrorCode.NOT_FOUND && !Set.of(ErrorCode.STORE_FAILURE).contains(e.code())) {
                world.violated("another owner's ids are NOT_FOUND", "op " + op.id() + " " + op + " answered " + e.code()
                        + " to another owner: " + e.getMessage());
            }
        }
    }

    /** Runs {@code count} calls at the same moment on as many threads, and waits for them. */
    private void together(int count, java.util.function.IntFunction<Void> call, Op op) {
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(count);
        List<Thread> callers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int n = i;
            Thread caller = new Thread(() -> {
                try {
                    start.await();
                    run(op, () -> call.apply(n));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            }, "sim-together-" + i);
            caller.setDaemon(true);
            callers.add(caller);
            caller.start();
        }
        start.countDown();
        try {
            done.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run(Op op, Runnable call) {
        try {
            call.run();
        } catch (ChatException expected) {
            // as in run(Op)
        } catch (RuntimeException | Error e) {
            world.violated("only ChatExceptions", "op " + op.id() + " " + op + " threw " + e);
        }
    }

    /** The messages of a thread's stored branch, for the checks. */
    static List<String> ids(List<Message> messages) {
        return messages.stream().map(Message::id).toList();
    }
}
