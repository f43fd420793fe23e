package dev.parley.chaos;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/** Writes this JVM's threads to {@code target/}, for a test that found the host not answering. */
final class ThreadDumps {
    private ThreadDumps() {
    }

    /** The file written, or why none could be. */
    static String write(String name) {
        StringBuilder dump = new StringBuilder();
        for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true, 64)) {
            dump.append(thread.toString());
            StackTraceElement[] stack = thread.getStackTrace();
            for (int i = 8; i < stack.length; i++) {
                dump.append("\tat ").append(stack[i]).append('\n');
            }
            dump.append('\n');
        }
        Path file = Paths.get("target", "threads-" + name + "-" + System.currentTimeMillis() + ".txt");
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, dump, StandardCharsets.UTF_8);
            return file.toString();
        } catch (IOException e) {
            return "no dump (" + e + ")";
        }
    }
}
