/// The paths of a message's story (docs/EVENTS.md): its status, its events and the project's
/// event stream.
extension OpenAPIDocument {
    static let messageEvents = #"""
            "/v1/projects/{project}/messages/{message}": {
              "get": {
                "operationId": "messageStatus",
                "summary": "What became of a message: its target, state and the counts of each outcome.",
                "security": [{"bearer": []}],
                "parameters": [
                  {"$ref": "#/components/parameters/project"},
                  {"name": "message", "in": "path", "required": true, "schema": {"type": "string"}}
                ],
                "responses": {
                  "200": {"description": "The message's status.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/v1/projects/{project}/messages/{message}/events": {
              "get": {
                "operationId": "messageEvents",
                "summary": "A message's events, oldest first, a page at a time.",
                "security": [{"bearer": []}],
                "parameters": [
                  {"$ref": "#/components/parameters/project"},
                  {"name": "message", "in": "path", "required": true, "schema": {"type": "string"}},
                  {"name": "pageSize", "in": "query", "schema": {"type": "integer"}},
                  {"name": "pageToken", "in": "query", "schema": {"type": "string"}}
                ],
                "responses": {
                  "200": {"description": "A page of events.", "content": {"application/json": {"schema": {"type": "object"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            },
            "/v1/projects/{project}/events:stream": {
              "get": {
                "operationId": "eventStream",
                "summary": "The project's events as Server-Sent Events, live; resumable with Last-Event-ID.",
                "security": [{"bearer": []}],
                "parameters": [
                  {"$ref": "#/components/parameters/project"},
                  {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}},
                  {"name": "message_id", "in": "query", "schema": {"type": "string"}},
                  {"name": "analytics_label", "in": "query", "schema": {"type": "string"}},
                  {"name": "type", "in": "query", "schema": {"type": "string"}}
                ],
                "responses": {
                  "200": {"description": "A stream that does not end.", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                  "default": {"$ref": "#/components/responses/Error"}
                }
              }
            }
        """#
}
