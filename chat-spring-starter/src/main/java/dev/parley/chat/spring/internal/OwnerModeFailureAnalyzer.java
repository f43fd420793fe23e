package dev.parley.chat.spring.internal;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Explains a start refused with {@link OwnerModeNotChosen}, in Spring Boot's start-up failure report. */
public final class OwnerModeFailureAnalyzer extends AbstractFailureAnalyzer<OwnerModeNotChosen> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, OwnerModeNotChosen cause) {
        return new FailureAnalysis(
                "Parley's endpoints need to know who calls them. Spring Security is not on the classpath, no "
                        + "OwnerResolver bean is defined and parley.owner.mode is AUTO, which would take the "
                        + "owner from the " + cause.header() + " request header - and anyone can send that header "
                        + "to read and write any owner's conversations.",
                "Choose one:\n"
                        + "\t- parley.owner.mode=HEADER, if a trusted proxy in front of the application sets "
                        + cause.header() + " (parley.owner.header names another header)\n"
                        + "\t- parley.owner.fixed=<owner>, for a single-user demo (every caller is that owner)\n"
                        + "\t- add Spring Security: the authenticated principal becomes the owner\n"
                        + "\t- define an OwnerResolver bean of your own",
                cause);
    }
}
