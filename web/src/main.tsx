// The dashboard: a single-page app over the REST API (docs/api.md §19). Signed out, it shows the
// sign-in and invitation pages; signed in, the shell with every resource.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import './styles.css';
import { post, setCsrf, whenSignedOut } from './api';
import type { Session } from '../../src/schemas/accounts';
import { loadSession } from './session';
import { match, navigate, onLinkClick, useLocation } from './router';
import { Confirmations, Notices } from './ui';
import { SignInPage } from './pages/sign-in';
import { InvitePage } from './pages/invite';
import { OverviewPage } from './pages/overview';
import { EmailsPage, EmailPage } from './pages/emails';
import { MetricsPage } from './pages/metrics';
import { ReceivingPage, ReceivedPage } from './pages/receiving';
import { InboxesPage, InboxSettingsPage } from './pages/inboxes';
import { MailboxPage } from './pages/mailbox';
import { BroadcastsPage, BroadcastPage } from './pages/broadcasts';
import { AudiencesPage, ContactPage } from './pages/audiences';
import { DomainsPage, DomainPage } from './pages/domains';
import { IpsPage } from './pages/ips';
import { ApiKeysPage } from './pages/api-keys';
import { WebhooksPage, WebhookPage } from './pages/webhooks';
import { TemplatesPage, TemplatePage } from './pages/templates';
import { TemplateVersionsPage } from './pages/template-versions';
import { AutomationBuilder, AutomationsPage, AutomationPage } from './pages/automations';
import { LogsPage, LogPage } from './pages/logs';
import { SettingsPage } from './pages/settings';
import { AuditLogPage } from './pages/audit-log';
import { EnrolTotpPage } from './pages/enrol-totp';
import { ConfirmEmailPage, ForgotPasswordPage, ResetPasswordPage, SmtpSettingsPage, UsagePage } from './pages/account';
import { RoleContext } from './role';
import { DeliverabilityPage, SetupBanner } from './pages/deliverability';

const NAV: { href: string; label: string; icon: string }[] = [
  { href: '/dashboard', label: 'Overview', icon: '◎' },
  { href: '/dashboard/emails', label: 'Emails', icon: '✉' },
  { href: '/dashboard/metrics', label: 'Metrics', icon: '▥' },
  { href: '/dashboard/inboxes', label: 'Inboxes', icon: '✆' },
  { href: '/dashboard/receiving', label: 'Receiving', icon: '⇩' },
  { href: '/dashboard/broadcasts', label: 'Broadcasts', icon: '◉' },
  { href: '/dashboard/templates', label: 'Templates', icon: '▤' },
  { href: '/dashboard/automations', label: 'Automations', icon: '⟳' },
  { href: '/dashboard/audiences', label: 'Audiences', icon: '☰' },
  { href: '/dashboard/domains', label: 'Domains', icon: '◇' },
  { href: '/dashboard/deliverability', label: 'Deliverability', icon: '✓' },
  { href: '/dashboard/ips', label: 'IPs', icon: '⇄' },
  { href: '/dashboard/api-keys', label: 'API keys', icon: '⌘' },
  { href: '/dashboard/webhooks', label: 'Webhooks', icon: '↯' },
  { href: '/dashboard/logs', label: 'Logs', icon: '≡' },
  { href: '/dashboard/settings', label: 'Settings', icon: '⚙' },
];

type Route = [string, (p: Record<string, string>, s: Session) => preact.JSX.Element];

const ROUTES: Route[] = [
  ['/dashboard', (_, s) => <OverviewPage team={s.team.id} />],
  ['/dashboard/emails', () => <EmailsPage />],
  ['/dashboard/emails/:id', (p) => <EmailPage id={p.id} />],
  ['/dashboard/metrics', () => <MetricsPage />],
  ['/dashboard/inboxes', () => <InboxesPage />],
  ['/dashboard/inboxes/:id', (p) => <MailboxPage id={p.id} />],
  ['/dashboard/inboxes/:id/settings', (p) => <InboxSettingsPage id={p.id} />],
  ['/dashboard/receiving', () => <ReceivingPage />],
  ['/dashboard/receiving/:id', (p) => <ReceivedPage id={p.id} />],
  ['/dashboard/broadcasts', () => <BroadcastsPage />],
  ['/dashboard/broadcasts/:id', (p, s) => <BroadcastPage id={p.id} me={s.user.email} />],
  ['/dashboard/templates', () => <TemplatesPage />],
  ['/dashboard/templates/:id', (p) => <TemplatePage id={p.id} />],
  ['/dashboard/templates/:id/versions', (p) => <TemplateVersionsPage id={p.id} />],
  ['/dashboard/automations', () => <AutomationsPage />],
  ['/dashboard/automations/new', () => <AutomationBuilder />],
  ['/dashboard/automations/:id', (p) => <AutomationPage id={p.id} />],
  ['/dashboard/automations/:id/edit', (p) => <AutomationBuilder id={p.id} />],
  ['/dashboard/audiences', () => <AudiencesPage />],
  ['/dashboard/audiences/contacts/:id', (p) => <ContactPage id={p.id} />],
  ['/dashboard/domains', () => <DomainsPage />],
  ['/dashboard/domains/:id', (p) => <DomainPage id={p.id} />],
  ['/dashboard/deliverability', () => <DeliverabilityPage />],
  ['/dashboard/ips', () => <IpsPage />],
  ['/dashboard/api-keys', () => <ApiKeysPage />],
  ['/dashboard/webhooks', () => <WebhooksPage />],
  ['/dashboard/webhooks/:id', (p) => <WebhookPage id={p.id} />],
  ['/dashboard/logs', () => <LogsPage />],
  ['/dashboard/logs/:id', (p) => <LogPage id={p.id} />],
  ['/dashboard/settings', (_, s) => <SettingsPage session={s} />],
  ['/dashboard/settings/audit-log', () => <AuditLogPage />],
  ['/dashboard/settings/smtp', () => <SmtpSettingsPage />],
  ['/dashboard/settings/usage', () => <UsagePage />],
];

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  // Set when the user turned on two-factor sign-in here (the session's user was loaded before).
  const [enrolled, setEnrolled] = useState(false);
  const { path } = useLocation();

  useEffect(() => {
    loadSession().then(setSession);
    whenSignedOut(() => {
      setCsrf(null);
      setSession(null);
    });
  }, []);

  const invite = match('/dashboard/invite/:token', path);
  if (invite) return <InvitePage token={invite.token} onSignedIn={setSession} />;
  // Pages a mailed link opens, signed in or not (docs/api.md §19.16).
  const reset = match('/dashboard/reset-password/:token', path);
  if (reset) return <ResetPasswordPage token={reset.token} />;
  const confirmEmail = match('/dashboard/confirm-email/:token', path);
  if (confirmEmail) return <ConfirmEmailPage token={confirmEmail.token} />;
  if (path === '/dashboard/forgot-password') return <ForgotPasswordPage />;
  if (session === undefined) return <div class="boot" aria-busy="true" />;
  if (!session) {
    if (path !== '/dashboard/sign-in') {
      navigate(`/dashboard/sign-in${path !== '/dashboard' ? `?next=${encodeURIComponent(path + location.search)}` : ''}`, { replace: true });
      return null;
    }
    return <SignInPage onSignedIn={setSession} />;
  }
  if (path === '/dashboard/sign-in') {
    const next = new URLSearchParams(location.search).get('next');
    navigate(next?.startsWith('/dashboard') ? next : '/dashboard', { replace: true });
    return null;
  }
  // The team requires a second factor this user has not set up: enrolling comes first (docs/api.md §19.4).
  if (session.team.require_totp && !session.user.totp_enabled && !enrolled)
    return (
      <EnrolTotpPage
        session={session}
        onDone={() => setEnrolled(true)}
        onSignOut={async () => {
          await post('/auth/sign-out').catch(() => {});
          setCsrf(null);
          setSession(null);
        }}
      />
    );
  let page: preact.JSX.Element | null = null;
  for (const [pattern, view] of ROUTES) {
    const params = match(pattern, path);
    if (params) {
      page = view(params, session);
      break;
    }
  }
  return (
    <RoleContext.Provider value={session.user.role}>
      <Shell session={session} page={page ?? <NotFound />} path={path} onSignOut={() => setSession(null)} />
    </RoleContext.Provider>
  );
}

function NotFound() {
  return (
    <div class="empty">
      <p class="empty-title">This page does not exist.</p>
      <a href="/dashboard">Go to the overview</a>
    </div>
  );
}

function Shell({ session, page, path, onSignOut }: { session: Session; page: preact.JSX.Element; path: string; onSignOut: () => void }) {
  const [menu, setMenu] = useState(false);
  useEffect(() => setMenu(false), [path]);
  // Local links inside the shell navigate in place: one listener for all of them (a link is its own
  // control, keyboard included: Enter on a link fires the click this catches).
  const shell = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = shell.current!;
    el.addEventListener('click', onLinkClick);
    return () => el.removeEventListener('click', onLinkClick);
  }, []);
  const current = (href: string) => (href === '/dashboard' ? path === '/dashboard' : path === href || path.startsWith(`${href}/`));
  return (
    <div class={`shell ${menu ? 'menu-open' : ''}`} ref={shell}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <aside class="sidebar">
        <div class="brand">
          <img src="/dashboard/assets/icon.svg" alt="" width="24" height="24" />
          <span>Posthorn</span>
          <button type="button" class="btn ghost small menu-toggle" aria-expanded={menu} aria-controls="nav" onClick={() => setMenu(!menu)}>
            Menu
          </button>
        </div>
        <nav id="nav" aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li>
                <a href={n.href} aria-current={current(n.href) ? 'page' : undefined}>
                  <span class="icon" aria-hidden="true">
                    {n.icon}
                  </span>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="account">
          <div class="who">
            <span class="team">{session.team.name}</span>
            <span class="muted small" title={session.user.email}>
              {session.user.email}
            </span>
            {session.user.role === 'viewer' && <span class="muted small">Read-only access (viewer)</span>}
          </div>
          <button
            type="button"
            class="btn ghost small"
            onClick={async () => {
              await post('/auth/sign-out').catch(() => {});
              setCsrf(null);
              onSignOut();
            }}
          >
            Sign out
          </button>
        </div>
      </aside>
      <main id="main" tabIndex={-1}>
        <SetupBanner />
        {page}
      </main>
      <Notices />
      <Confirmations />
    </div>
  );
}

render(<App />, document.getElementById('app')!);
