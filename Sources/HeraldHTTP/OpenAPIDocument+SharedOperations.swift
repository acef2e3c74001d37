/// The operations that several paths of `OpenAPIDocument` share, which differ only in
/// their id and summary.
extension OpenAPIDocument {
    /// The registration of `/c2dm/register3` and `/register` (the iOS SDK's name for it).
    static func register3(operationID: String, summary: String) -> String {
        #"""
          "post": {
            "operationId": "\#(operationID)",
            "summary": "\#(summary)",
            "security": [{"androidLogin": []}],
            "requestBody": {
              "required": true,
              "content": {
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "app": {"type": "string"},
                      "device": {"type": "string"},
                      "sender": {"type": "string"},
                      "delete": {"type": "string"},
                      "appid": {"type": "string"},
                      "apns_token": {"type": "string"}
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {"description": "token=TOKEN or Error=CODE.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "default": {"description": "A refused registration.", "content": {"text/plain": {"schema": {"type": "string"}}}}
            }
          }
        """#
    }

    /// The push operation of `/wp/{token}` and `/fcm/send/{token}`.
    static func webPush(operationID: String, summary: String) -> String {
        #"""
          "post": {
            "operationId": "\#(operationID)",
            "summary": "\#(summary)",
            "security": [{"vapid": []}, {}],
            "parameters": [
              {"$ref": "#/components/parameters/token"},
              {"name": "TTL", "in": "header", "required": true, "schema": {"type": "integer", "minimum": 0}},
              {"name": "Urgency", "in": "header", "schema": {"type": "string", "enum": ["very-low", "low", "normal", "high"]}},
              {"name": "Topic", "in": "header", "schema": {"type": "string", "maxLength": 32}},
              {"name": "Content-Encoding", "in": "header", "schema": {"type": "string", "enum": ["aes128gcm", "aesgcm"]}},
              {"name": "Encryption", "in": "header", "schema": {"type": "string"}},
              {"name": "Crypto-Key", "in": "header", "schema": {"type": "string"}},
              {"name": "Prefer", "in": "header", "description": "respond-async asks for a receipt.", "schema": {"type": "string"}},
              {"name": "Push-Receipt", "in": "header", "description": "A receipt subscription given before, for the receipt.", "schema": {"type": "string"}}
            ],
            "requestBody": {
              "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary", "maxLength": 4096}}}
            },
            "responses": {
              "201": {"description": "Accepted: Location names the message, TTL the time to live kept, Link the receipt subscription when a receipt was asked for."},
              "202": {"description": "Accepted with Prefer: respond-async: as 201, Link naming the receipt subscription."},
              "400": {"description": "A missing TTL or a bad encoding.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "401": {"description": "A bad or missing VAPID credential.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "403": {"description": "VAPID signed by another key than the channel's.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "404": {"description": "No such push channel.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "410": {"description": "The push channel was unsubscribed.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "413": {"description": "A body over 4,096 bytes.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "429": {"description": "Too many messages to this channel; see Retry-After.", "content": {"text/plain": {"schema": {"type": "string"}}}}
            }
          }
        """#
    }

    /// The read of a Web Push receipt subscription (`/wp/r/{subscription}`).
    static let webPushReceipts = #"""
          "get": {
            "operationId": "webPushReceipts",
            "summary": "The receipts of push messages sent with a receipt asked for (RFC 8030 section 5.1).",
            "security": [],
            "parameters": [
              {"name": "subscription", "in": "path", "required": true, "schema": {"type": "string"}},
              {"name": "after", "in": "query", "description": "The last sequence read; those up to it are forgotten.", "schema": {"type": "integer", "minimum": 0}},
              {"name": "Prefer", "in": "header", "description": "wait=N waits up to N seconds (at most 30) for a receipt.", "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {"description": "The receipts: sequence, message resource and acknowledged (ms since the epoch).", "content": {"application/json": {"schema": {"type": "object", "properties": {"receipts": {"type": "array", "items": {"type": "object"}}}}}}},
              "400": {"description": "A bad after.", "content": {"text/plain": {"schema": {"type": "string"}}}},
              "404": {"description": "Not a receipt subscription.", "content": {"text/plain": {"schema": {"type": "string"}}}}
            }
          }
        """#

    /// The operation of `/fcm/send` and `/gcm/send`, which differ only in their id and summary.
    static func legacySend(operationID: String, summary: String) -> String {
        #"""
          "post": {
            "operationId": "\#(operationID)",
            "summary": "\#(summary)",
            "security": [{"serverKey": []}, {"bearer": []}],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "to": {"type": "string"},
                      "registration_ids": {"type": "array", "minItems": 1, "maxItems": 1000, "items": {"type": "string"}},
                      "condition": {"type": "string"},
                      "collapse_key": {"type": "string"},
                      "priority": {"type": "string", "enum": ["high", "normal"]},
                      "content_available": {"type": "boolean"},
                      "mutable_content": {"type": "boolean"},
                      "time_to_live": {"type": "integer", "minimum": 0, "maximum": 2419200},
                      "restricted_package_name": {"type": "string"},
                      "dry_run": {"type": "boolean"},
                      "data": {"type": "object"},
                      "notification": {"type": "object"}
                    }
                  }
                },
                "application/x-www-form-urlencoded": {
                  "schema": {
                    "type": "object",
                    "properties": {
                      "registration_id": {"type": "string"},
                      "collapse_key": {"type": "string"},
                      "time_to_live": {"type": "string"},
                      "dry_run": {"type": "string"}
                    }
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "multicast_id, success, failure, canonical_ids and results for tokens; message_id or error for a topic or condition; success, failure and failed_registration_ids for a device group; id=… or Error=… for the form.",
                "content": {"application/json": {"schema": {"type": "object"}}, "text/plain": {"schema": {"type": "string"}}}
              },
              "default": {"description": "The request's own failure, in plain text.", "content": {"text/plain": {"schema": {"type": "string"}}}}
            }
          }
        """#
    }
}
