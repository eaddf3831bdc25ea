export { parseComment, renderComment, isBlackboardComment, assertBlackboardType, BlackboardCommentError, DEFAULT_BLACKBOARD_TYPE, type DecodedComment } from "./codec.js";
export { findJsonSyntaxError, type JsonSyntaxError } from "./json-syntax.js";
