package import HummingbirdCore
package import Logging
package import NIOCore

extension HTTPServerBuilder {
    /// HTTP/1.1 whose request handlers run on the event loop that owns the connection (see
    /// ``EventLoopBoundChannel``).
    package static func http1OnEventLoop(configuration: HTTP1Channel.Configuration = HTTPServerDefaults.http1) -> HTTPServerBuilder {
        .init { responder in EventLoopBoundChannel(base: HTTP1Channel(responder: responder, configuration: configuration)) }
    }
}

/// Runs everything a connection's task does (reading requests, the handlers, writing responses)
/// on the event loop that owns the connection, instead of on Swift's global executor.
///
/// Without it every request hops threads twice: the handler is resumed on the global executor
/// after NIO read the request, and the response goes back to the event loop to be written. Every
/// database statement hops twice more: the driver writes and reads on its connection's event loop
/// and resumes the waiting handler on the global executor. On two cores those hops were 12 % of
/// the portal's CPU (docs/benchmarks.md). With the handler on the connection's event loop, and the
/// database pools on the same event loop group (``PortalDatabase`` picks the current loop's pool),
/// a request and its statements stay on one thread.
///
/// The cost: a handler that computes for long holds up the other connections on its loop, as it
/// would hold up a thread of the global executor. Nothing here blocks (PAM runs on its own threads).
package struct EventLoopBoundChannel<Base: ServerChildChannel>: ServerChildChannel {
    package typealias Value = Base.Value
    let base: Base

    package init(base: Base) {
        self.base = base
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        base.setup(channel: channel, logger: logger)
    }

    package func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop: value.channel.eventLoop)) {
            await base.handle(value: value, logger: logger)
        }
    }
}

/// A Swift task executor that runs jobs on one NIO event loop (NIO 2.101 offers event loops only
/// as serial executors, for actors).
package final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    package init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
