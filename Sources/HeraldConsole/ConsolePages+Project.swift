/// The templates of a project's pages: its navigation, the composer, the scheduled sends
/// and the reports.
extension ConsolePages {
    static let projectTemplates: [String: String] = [
        "project-nav": """
        <h1>{{project}}</h1>
        <nav aria-label="Project"><ul class="tabs">{{#nav}}<li><a href="/console/projects/{{project}}{{#href}}/{{href}}{{/href}}"
        {{#current}}aria-current="page"{{/current}}>{{label}}</a></li>{{/nav}}</ul></nav>
        {{#status}}<p class="ok" role="status">{{status}}</p>{{/status}}
        {{#statusLink}}<p><a href="{{statusLink}}">{{statusLinkLabel}}</a></p>{{/statusLink}}
        {{#alert}}<p class="error" role="alert">{{alert}}</p>{{/alert}}
        """,
        "composer": """
        {{> head}}
        {{> project-nav}}
        <form method="post" action="/console/projects/{{project}}/send" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <section aria-labelledby="compose">
        <h2 id="compose">Compose a notification</h2>
        <div class="grid">
        <div><label for="target">Send to</label>
        <select id="target" name="target">{{#target_options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/target_options}}</select></div>
        <div><label for="to">Topic, token or condition</label>
        <input id="to" name="to" value="{{form.to}}"{{#errors.to}} aria-invalid="true" aria-describedby="to-error"{{/errors.to}}>
        {{#errors.to}}<p class="error" id="to-error">{{errors.to}}</p>{{/errors.to}}</div>
        </div>
        <label for="title">Title</label><input id="title" name="title" value="{{form.title}}">
        <label for="body">Text</label><textarea id="body" name="body" rows="3">{{form.body}}</textarea>
        <label for="image">Image URL</label>
        <input id="image" name="image" value="{{form.image}}"{{#errors.image}} aria-invalid="true" aria-describedby="image-error"{{/errors.image}}>
        {{#errors.image}}<p class="error" id="image-error">{{errors.image}}</p>{{/errors.image}}
        <label for="data">Custom data (one key=value per line)</label>
        <textarea id="data" name="data" rows="3"{{#errors.data}} aria-invalid="true" aria-describedby="data-error"{{/errors.data}}>{{form.data}}</textarea>
        {{#errors.data}}<p class="error" id="data-error">{{errors.data}}</p>{{/errors.data}}
        <label for="analytics_label">Analytics label</label>
        <input id="analytics_label" name="analytics_label" value="{{form.analytics_label}}"{{#errors.analytics_label}} aria-invalid="true" aria-describedby="analytics_label-error"{{/errors.analytics_label}}>
        {{#errors.analytics_label}}<p class="error" id="analytics_label-error">{{errors.analytics_label}}</p>{{/errors.analytics_label}}
        </section>
        <section aria-labelledby="options">
        <h2 id="options">Platform options</h2>
        <div class="grid3">
        <fieldset><legend>Android</legend>
        <label for="android_priority">Priority</label>
        <select id="android_priority" name="android_priority">{{#android_priority_options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/android_priority_options}}</select>
        <label for="android_ttl">Time to live (seconds)</label>
        <input id="android_ttl" name="android_ttl" inputmode="numeric" value="{{form.android_ttl}}"{{#errors.android_ttl}} aria-invalid="true" aria-describedby="android_ttl-error"{{/errors.android_ttl}}>
        {{#errors.android_ttl}}<p class="error" id="android_ttl-error">{{errors.android_ttl}}</p>{{/errors.android_ttl}}
        <label for="android_collapse_key">Collapse key</label><input id="android_collapse_key" name="android_collapse_key" value="{{form.android_collapse_key}}">
        <label for="android_channel">Notification channel</label><input id="android_channel" name="android_channel" value="{{form.android_channel}}">
        <label for="android_click_action">Click action</label><input id="android_click_action" name="android_click_action" value="{{form.android_click_action}}">
        </fieldset>
        <fieldset><legend>Apple</legend>
        <label for="apns_priority">apns-priority</label>
        <select id="apns_priority" name="apns_priority">{{#apns_priority_options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/apns_priority_options}}</select>
        <label for="apns_collapse_id">apns-collapse-id</label>
        <input id="apns_collapse_id" name="apns_collapse_id" value="{{form.apns_collapse_id}}"{{#errors.apns_collapse_id}} aria-invalid="true" aria-describedby="apns_collapse_id-error"{{/errors.apns_collapse_id}}>
        {{#errors.apns_collapse_id}}<p class="error" id="apns_collapse_id-error">{{errors.apns_collapse_id}}</p>{{/errors.apns_collapse_id}}
        <label for="apns_badge">Badge</label>
        <input id="apns_badge" name="apns_badge" inputmode="numeric" value="{{form.apns_badge}}"{{#errors.apns_badge}} aria-invalid="true" aria-describedby="apns_badge-error"{{/errors.apns_badge}}>
        {{#errors.apns_badge}}<p class="error" id="apns_badge-error">{{errors.apns_badge}}</p>{{/errors.apns_badge}}
        <label for="apns_sound">Sound</label><input id="apns_sound" name="apns_sound" value="{{form.apns_sound}}">
        </fieldset>
        <fieldset><legend>Web</legend>
        <label for="web_link">Link</label>
        <input id="web_link" name="web_link" value="{{form.web_link}}"{{#errors.web_link}} aria-invalid="true" aria-describedby="web_link-error"{{/errors.web_link}}>
        {{#errors.web_link}}<p class="error" id="web_link-error">{{errors.web_link}}</p>{{/errors.web_link}}
        <label for="web_ttl">Time to live (seconds)</label>
        <input id="web_ttl" name="web_ttl" inputmode="numeric" value="{{form.web_ttl}}"{{#errors.web_ttl}} aria-invalid="true" aria-describedby="web_ttl-error"{{/errors.web_ttl}}>
        {{#errors.web_ttl}}<p class="error" id="web_ttl-error">{{errors.web_ttl}}</p>{{/errors.web_ttl}}
        <label for="web_urgency">Urgency</label>
        <select id="web_urgency" name="web_urgency">{{#web_urgency_options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/web_urgency_options}}</select>
        </fieldset>
        </div>
        </section>
        <section aria-labelledby="send">
        <h2 id="send">Send</h2>
        <button type="submit" name="action" value="preview">Preview</button>
        <div class="grid">
        <div><label for="test_token">Test token</label>
        <input id="test_token" name="test_token" value="{{form.test_token}}"{{#errors.test_token}} aria-invalid="true" aria-describedby="test_token-error"{{/errors.test_token}}>
        {{#errors.test_token}}<p class="error" id="test_token-error">{{errors.test_token}}</p>{{/errors.test_token}}
        <button type="submit" name="action" value="test">Send a test to this token</button></div>
        <div><label for="send_at">Send at (UTC)</label>
        <input id="send_at" name="send_at" type="datetime-local" step="1" value="{{form.send_at}}"{{#errors.send_at}} aria-invalid="true" aria-describedby="send_at-error"{{/errors.send_at}}>
        {{#errors.send_at}}<p class="error" id="send_at-error">{{errors.send_at}}</p>{{/errors.send_at}}
        <button type="submit" name="action" value="schedule">Schedule</button></div>
        </div>
        <button type="submit" name="action" value="now">Send now</button>
        </section>
        </form>
        {{#hasPreviews}}<section aria-labelledby="preview"><h2 id="preview">What each platform receives</h2>{{/hasPreviews}}
        {{#previews}}<h3>{{platform}}</h3>
        <p>Time to live {{ttl}} s, {{priority}} priority, collapse key: {{collapse}}</p>
        <pre aria-label="{{platform}} payload">{{payload}}</pre>{{/previews}}
        {{#hasPreviews}}</section>{{/hasPreviews}}
        {{> foot}}
        """,
        "scheduled": """
        {{> head}}
        {{> project-nav}}
        <section aria-labelledby="scheduled">
        <h2 id="scheduled">Scheduled sends</h2>
        {{^sends}}<p>Nothing has been scheduled. Schedule a send from the composer.</p>{{/sends}}
        {{#hasSends}}<table><thead><tr><th scope="col">Due</th><th scope="col">Message</th><th scope="col">By</th>
        <th scope="col">State</th><th scope="col">Outcome</th><th scope="col"><span class="hidden">Action</span></th></tr></thead><tbody>{{/hasSends}}
        {{#sends}}<tr><td>{{due}}</td><td>{{summary}}</td><td>{{by}}</td><td>{{state}}</td><td>{{outcome}}</td><td>
        {{#waiting}}<form method="post" action="/console/projects/{{project}}/scheduled/{{id}}/cancel">
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" aria-label="Cancel {{summary}} due {{due}}">Cancel</button></form>{{/waiting}}
        </td></tr>{{/sends}}
        {{#hasSends}}</tbody></table>{{/hasSends}}
        </section>
        {{> foot}}
        """,
        "quotas": """
        {{> head}}
        {{> project-nav}}
        <section aria-labelledby="limits">
        <h2 id="limits">Limits</h2>
        <form method="post" action="/console/projects/{{project}}/quotas">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <table><thead><tr><th scope="col">Rule</th><th scope="col">Limit</th><th scope="col">Setting</th><th scope="col">In use now</th></tr></thead>
        <tbody>{{#limits}}<tr><td>{{rule}}</td><th scope="row">{{name}}</th><td>{{#admin}}<input name="{{setting}}" value="{{value}}" inputmode="numeric"
        aria-label="{{name}}">{{/admin}}{{^admin}}{{value}}{{/admin}}</td><td>{{use}}</td></tr>{{/limits}}</tbody></table>
        {{#admin}}<button type="submit">Save limits</button>{{/admin}}
        </form>
        </section>
        <section aria-labelledby="errors">
        <h2 id="errors">Errors</h2>
        <div class="charts">{{#errorCharts}}<figure>{{{svg}}}</figure>{{/errorCharts}}</div>
        {{#hasErrors}}<table aria-label="Errors by code"><thead><tr><th scope="col">Code</th><th scope="col">HTTP status</th>
        <th scope="col">Last 24 hours</th><th scope="col">Last 14 days</th></tr></thead>
        <tbody>{{#errorCodes}}<tr><th scope="row">{{code}}</th><td>{{status}}</td><td>{{day}}</td><td>{{fortnight}}</td></tr>{{/errorCodes}}</tbody></table>{{/hasErrors}}
        {{^hasErrors}}<p>No request of this project was refused in the last 14 days.</p>{{/hasErrors}}
        </section>
        {{> foot}}
        """,
        "devices": """
        {{> head}}
        {{> project-nav}}
        <section aria-labelledby="look-up">
        <h2 id="look-up">Look a token up</h2>
        <form method="post" action="/console/projects/{{project}}/devices">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="token">Registration token</label><input id="token" name="token" value="{{token}}" required>
        <button type="submit">Look up</button>
        </form>
        {{#found}}<table aria-label="The app instance"><tbody>
        <tr><th scope="row">State</th><td>{{state}}</td></tr>
        <tr><th scope="row">App</th><td>{{app}}</td></tr>
        <tr><th scope="row">Platform</th><td>{{platform}}</td></tr>
        <tr><th scope="row">Device</th><td>{{device}}</td></tr>
        <tr><th scope="row">Registered</th><td>{{created}}</td></tr>
        <tr><th scope="row">Last connection</th><td>{{lastConnection}}</td></tr>
        <tr><th scope="row">Messages waiting for the device</th><td>{{pending}}</td></tr>
        <tr><th scope="row">Topics</th><td>{{topics}}</td></tr>
        </tbody></table>{{/found}}
        </section>
        <section aria-labelledby="topics">
        <h2 id="topics">Topics</h2>
        {{#hasTopics}}<table><thead><tr><th scope="col">Topic</th><th scope="col">Subscribers</th></tr></thead>
        <tbody>{{#topics}}<tr><th scope="row">{{topic}}</th><td>{{subscribers}}</td></tr>{{/topics}}</tbody></table>{{/hasTopics}}
        {{^hasTopics}}<p>No app instance of this project is subscribed to a topic.</p>{{/hasTopics}}
        </section>
        <section aria-labelledby="groups">
        <h2 id="groups">Device groups</h2>
        {{#hasGroups}}<table><thead><tr><th scope="col">Group</th><th scope="col">Notification key</th><th scope="col">Members</th></tr></thead>
        <tbody>{{#groups}}<tr><th scope="row">{{name}}</th><td>{{key}}</td><td>{{count}}: {{#members}}{{token}} {{/members}}</td></tr>{{/groups}}</tbody></table>{{/hasGroups}}
        {{^hasGroups}}<p>This project has no device groups.</p>{{/hasGroups}}
        </section>
        {{> foot}}
        """,
        "credentials": """
        {{> head}}
        {{> project-nav}}
        <section aria-labelledby="ids">
        <h2 id="ids">Sender id and keys for app servers</h2>
        <table aria-label="Project credentials"><tbody>
        <tr><th scope="row">Sender id (project number)</th><td><code>{{sender}}</code></td></tr>
        <tr><th scope="row">API key</th><td><code>{{apiKey}}</code></td></tr>
        <tr><th scope="row">Server key (legacy HTTP and XMPP)</th><td><code>{{serverKey}}</code></td></tr>
        </tbody></table>
        </section>
        <section aria-labelledby="accounts">
        <h2 id="accounts">Service-account keys</h2>
        <table><thead><tr><th scope="col">Key id</th><th scope="col">Created</th><th scope="col">Age</th><th scope="col">State</th>
        {{#admin}}<th scope="col"><span class="hidden">Actions</span></th>{{/admin}}</tr></thead>
        <tbody>{{#keys}}<tr><th scope="row"><code>{{id}}</code></th><td>{{created}}</td><td>{{age}}</td><td>{{state}}</td>
        {{#admin}}<td>{{#active}}<form method="post" action="/console/projects/{{project}}/credentials/keys/{{id}}/rotate">
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" aria-label="Rotate key {{id}}">Rotate</button></form>
        <form method="post" action="/console/projects/{{project}}/credentials/keys/{{id}}/revoke">
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" aria-label="Revoke key {{id}}">Revoke</button></form>{{/active}}</td>{{/admin}}
        </tr>{{/keys}}</tbody></table>
        {{#admin}}<form method="post" action="/console/projects/{{project}}/credentials/keys">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Create a key and download its file</button></form>
        <p>The file holds the key's private part, which Herald keeps nowhere: store it safely.</p>{{/admin}}
        </section>
        <section aria-labelledby="apns">
        <h2 id="apns">Apple push service (APNs)</h2>
        {{^apnsNone}}<ul>{{#apns}}<li>{{summary}}{{#admin}} <form method="post" class="inline" action="/console/projects/{{project}}/credentials/apns/{{kind}}/remove">
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Remove</button></form>{{/admin}}</li>{{/apns}}</ul>{{/apnsNone}}
        {{#apnsNone}}<p>None: messages to Apple app instances reached through APNs wait until one is given.</p>{{/apnsNone}}
        {{#admin}}<h3>A signing key (.p8)</h3>
        <form method="post" action="/console/projects/{{project}}/credentials/apns-key">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="apns-key">The .p8 file's text</label><textarea id="apns-key" name="key" rows="6" required></textarea>
        <label for="apns-key-id">Key id</label><input id="apns-key-id" name="key_id" required>
        <label for="apns-team-id">Team id</label><input id="apns-team-id" name="team_id" required>
        <label for="apns-key-bundle">Bundle id</label><input id="apns-key-bundle" name="bundle_id" required>
        <label for="apns-key-env">Environment</label><select id="apns-key-env" name="environment"><option value="both">both</option><option value="production">production</option><option value="development">development</option></select>
        <button type="submit">Store, replacing the project's signing key</button></form>
        <h3>A client certificate</h3>
        <form method="post" action="/console/projects/{{project}}/credentials/apns-certificate">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="apns-certificate">PEM with its private key, or a .p12 file in base64</label><textarea id="apns-certificate" name="certificate" rows="6" required></textarea>
        <label for="apns-password">The .p12 file's password</label><input id="apns-password" name="password" type="password" autocomplete="off">
        <label for="apns-cert-bundle">Bundle id (default: the certificate's)</label><input id="apns-cert-bundle" name="bundle_id">
        <button type="submit">Store, replacing the project's certificate</button></form>
        <p>Herald checks each before storing it, and shows what it stored, never the key.</p>{{/admin}}
        </section>
        <section aria-labelledby="fcm-relay">
        <h2 id="fcm-relay">Google's tokens, handed to FCM</h2>
        {{#fcmRelay}}<p>{{fcmRelay}}{{#admin}} <form method="post" class="inline" action="/console/projects/{{project}}/credentials/fcm-relay/remove">
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Remove</button></form>{{/admin}}</p>{{/fcmRelay}}
        {{^fcmRelay}}<p>None: a token Herald did not issue is <code>UNREGISTERED</code>.</p>{{/fcmRelay}}
        {{#admin}}<form method="post" action="/console/projects/{{project}}/credentials/fcm-relay">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="fcm-relay-key">The Google service-account key file's text (JSON)</label><textarea id="fcm-relay-key" name="key" rows="6" required></textarea>
        <button type="submit">Store, replacing the project's key</button></form>
        <p>Herald checks the key, <code>client_email</code>, <code>project_id</code> and <code>token_uri</code> before storing it, and shows the account, never the key.</p>{{/admin}}
        </section>
        <section aria-labelledby="web-push-key">
        <h2 id="web-push-key">Browsers, through their own push service</h2>
        {{#webPushKey}}<p>The project's Web Push key, which the web app gives <code>getToken</code> as <code>vapidKey</code>: <code>{{webPushKey}}</code></p>{{/webPushKey}}
        {{^webPushKey}}<p>None yet: a browser that keeps its own push service cannot be registered.</p>
        {{#admin}}<form method="post" action="/console/projects/{{project}}/credentials/web-push-key">
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Make the project's Web Push key</button></form>{{/admin}}{{/webPushKey}}
        </section>
        <section aria-labelledby="webhooks">
        <h2 id="webhooks">Webhooks</h2>
        {{^webhooksNone}}<table><thead><tr><th scope="col">Webhook</th><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Last errors</th></tr></thead>
        <tbody>{{#webhooks}}<tr><th scope="row"><code>{{id}}</code></th><td>{{url}}</td><td>{{events}}</td><td>{{state}} after {{after}}{{#paused}}{{#admin}} <form method="post" class="inline" action="/console/projects/{{project}}/credentials/webhooks/{{id}}/resume">
        <input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" aria-label="Resume webhook {{id}}">Resume</button></form>{{/admin}}{{/paused}}</td>
        <td>{{failures}}<ul>{{#errors}}<li>{{error}}</li>{{/errors}}</ul></td></tr>{{/webhooks}}</tbody></table>{{/webhooksNone}}
        {{#webhooksNone}}<p>None. <code>herald project webhook add {{project}} --url https://…</code> adds one.</p>{{/webhooksNone}}
        </section>
        {{> foot}}
        """,
        "message": """
        {{> head}}
        {{> project-nav}}
        <section aria-labelledby="find">
        <h2 id="find">A message</h2>
        <form method="get" action="/console/projects/{{project}}/messages">
        <label for="id">Message id</label><input id="id" name="id" value="{{id}}" required>
        <button type="submit">Show</button>
        </form>
        <table aria-label="The message"><tbody>{{#message}}<tr><th scope="row">{{name}}</th><td>{{value}}</td></tr>{{/message}}</tbody></table>
        </section>
        {{> foot}}
        """,
        "reports": """
        {{> head}}
        {{> project-nav}}
        <section aria-labelledby="reports">
        <h2 id="reports">Delivery reports</h2>
        <form method="get" action="/console/projects/{{project}}/reports" class="grid3">
        <div><label for="days">Days</label><select id="days" name="days">{{#day_options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/day_options}}</select></div>
        <div><label for="app">App</label><select id="app" name="app"><option value="">Every app</option>{{#app_options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/app_options}}</select></div>
        <div><label for="label">Analytics label</label><select id="label" name="label"><option value="">Every label</option>{{#label_options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/label_options}}</select></div>
        <button type="submit">Show</button>
        </form>
        <div class="charts">{{#charts}}<figure>{{{svg}}}</figure>{{/charts}}</div>
        <table aria-label="Figures per day"><thead><tr><th scope="col">Day</th>{{#figures}}<th scope="col">{{name}}</th>{{/figures}}</tr></thead>
        <tbody>{{#days}}<tr><th scope="row">{{day}}</th>{{#counts}}<td>{{count}}</td>{{/counts}}</tr>{{/days}}</tbody></table>
        {{^days}}<p>Nothing was sent in these days.</p>{{/days}}
        <p>Messages to a topic or a condition are counted accepted once, with no app; each device's delivery under its app.</p>
        <p><a href="/console/projects/{{project}}/messages">Look a message up by its id</a></p>
        </section>
        {{> foot}}
        """,
    ]
}
