package protocol

// Every error code and close reason of the protocol is here, and docs/protocol.md
// lists them in one table ("Error codes and close reasons"): a new one is added to
// both.

// Error codes: the "code" of an error frame. An error frame goes to the one client
// that caused it; the connection carries on unless the code says otherwise.
const (
	// CodeBadFrame: not JSON, not one object, an unknown field or a wrong field type,
	// no "type", a binary frame. The client fixes its frame.
	CodeBadFrame = "bad-frame"
	// CodeUnknownType: "type" (or a lecture command's "op") is not one the socket takes.
	CodeUnknownType = "unknown-type"
	// CodeBadField: a field is missing or out of range; the message starts with the
	// field's name.
	CodeBadField = "bad-field"
	// CodeBadScenario: reset with a scenario that does not validate, or of another
	// algorithm; the message names the field.
	CodeBadScenario = "bad-scenario"
	// CodeRefused: the command does not apply now (releasing outside the CS, a second
	// answer, a presenter op out of turn). The run is unchanged.
	CodeRefused = "refused"
	// CodeStopped: the run hit its event limit; the client seeks back or resets.
	CodeStopped = "run-stopped"
	// CodeBusy: the session (or lecture) has its maximum of viewers (followers); the
	// connection closes with 1013 and the page may try again later.
	CodeBusy = "busy"
	// CodeRateLimited: a frame came faster than the connection's rate and was dropped
	// unread (so the error has no ref); the client slows down.
	CodeRateLimited = "rate-limited"
	// CodeGone: the session or lecture has ended; the connection closes and the page
	// does not reconnect (a reload starts a new session).
	CodeGone = "gone"
	// CodeInternal: the run hit an internal error (a panic in the simulation); that
	// session ends, every other carries on.
	CodeInternal = "internal"

	// CodeReadOnly: a lecture follower sent a command that would drive the run.
	CodeReadOnly = "read-only"
	// CodeNoLecture: on connect, no lecture has this code; the connection closes (1008).
	CodeNoLecture = "no-lecture"
	// CodeNotPresenter: on connect, the presenter token is not valid; the connection
	// closes (1008).
	CodeNotPresenter = "not-presenter"
	// CodeUnreachable: the server that runs the lecture cannot be reached over NATS
	// right now; the connection closes (1013) and the page reconnects with after=N.
	CodeUnreachable = "unreachable"
	// CodeQuestionOpen: a fork of a lecture was asked to go past the presenter's step
	// while a question is open (step, play, seek, act); it waits there until the
	// answer is revealed.
	CodeQuestionOpen = "question-open"
)

// Close reasons: the text of the WebSocket close frame (its status in brackets). A
// page reads the status; the text is for people and logs.
const (
	// CloseSlow (1013): the client let its queue of frames fill; nobody waits for it.
	CloseSlow = "too slow: frames were piling up"
	// CloseSessionEnded (1001): the session ended or dropped this viewer.
	CloseSessionEnded = "the session ended"
	// CloseShuttingDown (1001): the server is shutting down, after the queued frames.
	CloseShuttingDown = "server shutting down"
	// CloseAbuse (1008): the client kept sending past its allowance of refused frames.
	CloseAbuse = "too many frames: slow down"
	// CloseNoSession (1008): /ws/{id} names no live session (after a gone error frame).
	CloseNoSession = "no such session"
	// CloseRefused (1008): a lecture socket refused on connect (no-lecture,
	// not-presenter, unreachable, a bad after), after the error frame saying why.
	CloseRefused = "refused"
	// CloseLectureEnded (1000): the lecture ended, after its ended frame and gone.
	CloseLectureEnded = "the lecture ended"
	// CloseUnreachable (1013): the lecture's server cannot be reached; reconnect later.
	CloseUnreachable = "the lecture's server cannot be reached"
	// CloseInternal (1011): serving the socket panicked; the server carries on.
	CloseInternal = "internal error"
)
