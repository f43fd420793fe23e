/** Internals of the LangChain4j adapter; not a public API, may change in any release. */
@NullMarked
package dev.parley.chat.langchain4j.internal;

import org.jspecify.annotations.NullMarked;
